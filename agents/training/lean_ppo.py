"""The PPO trainer of ``jamb-train``: MaskablePPO with a lean rollout and update loop (issues 29, 40).

:class:`LeanMaskablePPO` is sb3-contrib's ``MaskablePPO`` with its two inner loops
rewritten CleanRL-style: what a step and a minibatch need, as plain tensor operations, and
nothing else. Everything around them is SB3's, unchanged: the policy network
(``MaskableActorCriticPolicy``), the rollout buffer, GAE, the learning-rate and clip
schedules, callbacks (evaluation, checkpoints, the stop request), the logger and
TensorBoard keys, ``save``/``load``. So its runs have the run folder, resume,
evaluation harness and model files of SB3's own loop, which it replaced (``MaskablePPO.load``
reads its zips, and it resumes theirs), and its models play through ``agents.load``,
``jamb-evaluate`` and ``jamb-play`` like any other.

What is left out, and why it does not change the algorithm:

* **Rollout** (:meth:`LeanMaskablePPO.collect_rollouts`): no ``torch.distributions``
  object per step (its construction validates its arguments and normalises the logits
  twice); the masked logits (illegal actions at ``MASKED_LOGIT``, as sb3-contrib's
  ``MaskableCategorical``) are normalised once by ``log_softmax`` and sampled with
  ``torch.multinomial``: the same distribution. The masks are the env's
  ``action_masks()`` (``JambVecEnv``: the engine's legal masks, no per-env Python call;
  SB3's VecEnvs, ``vec_env: dummy`` or ``subproc``: each ``JambEnv``'s, as sb3-contrib asks).
  Jamb games never truncate (a game ends when the sheet is full), so SB3's bootstrapping
  of time-limit truncations has nothing to do; a truncated step is refused
  (RuntimeError) rather than trained on wrongly.
* **Update** (:meth:`LeanMaskablePPO.train`): the buffer is flattened once per update in
  SB3's order (``swap_and_flatten``) and each minibatch is indexed from those tensors; the
  minibatch order is SB3's too (one ``numpy.random.permutation`` per epoch). The loss is SB3's, term for
  term: clipped surrogate on normalised advantages, optional value clipping
  (``clip_range_vf``), MSE value loss, entropy of the masked distribution, gradient-norm
  clipping, ``target_kl`` early stopping. Given the same buffer and random state it
  makes the same update as ``MaskablePPO.train`` (``tests/training/test_lean_ppo.py`` checks the
  parameters after one update against SB3's).

**Precision** (``precision`` of the config, :data:`~agents.training.config.PRECISION_ENV`
overriding it): with bf16 the networks' hidden layers run under ``torch.autocast`` in
bfloat16, in the rollout's inference and the update's forward and backward, on a device
with bf16 units (``auto``: :func:`bf16_units`; ``bf16`` forces it). The weights, their
gradients and Adam's state stay fp32 (autocast casts a bf16 copy of each weight per
forward); the two heads (logits and value) run in fp32 on the fp32 copy of the last hidden
layer, so the log-probabilities (``log_softmax``), the values, the advantages, the returns
and the loss are fp32. With fp32 nothing is cast and the computation is the one before
precision existed, operation for operation. docs/training.md "Precision".

Speed (``jamb-bench --training``, ``--trainers CONFIG``): docs/results.md "Training at the
machine's speed".
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
import torch as th
import torch.nn.functional as F
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.utils import explained_variance

from agents.training.config import PRECISION_ENV, CompileFailed, precision_setting

#: Logit of an illegal action: sb3-contrib's ``MaskableCategorical`` value (finite, so
#: ``0 * logit`` stays 0 in the entropy).
MASKED_LOGIT = -1e8


#: The CPU capabilities (``torch.cpu.get_capabilities()``) that make bf16 matrix products fast: Intel's AMX
#: tiles, AVX-512 BF16 (Intel Cooper Lake on, AMD Zen 4 on), Arm's BF16 and SVE BF16 instructions.
BF16_CPU_UNITS = ("amx_bf16", "avx512_bf16", "bf16", "sve_bf16")
_said: set[str] = set()  # the precision lines already printed by this process


def bf16_units(device: th.device | str) -> bool:
    """Whether ``device`` multiplies bf16 matrices in hardware: a CUDA GPU that supports bf16,
    or a CPU with one of :data:`BF16_CPU_UNITS` (detected, never assumed: a torch without
    ``torch.cpu.get_capabilities`` reports none)."""
    device = th.device(device)
    if device.type == "cuda":
        return th.cuda.is_available() and th.cuda.is_bf16_supported()
    if device.type != "cpu":
        return False
    capabilities = getattr(getattr(th, "cpu", None), "get_capabilities", None)
    if capabilities is None:
        return False
    caps = capabilities()
    return any(bool(caps.get(unit, False)) for unit in BF16_CPU_UNITS)


def autocast_dtype(precision: str, device: th.device | str) -> th.dtype | None:
    """``torch.bfloat16`` when training on ``device`` under the ``precision`` setting
    (:data:`~agents.training.config.PRECISIONS`; :data:`~agents.training.config.PRECISION_ENV`
    overrides it) uses bf16 autocast, else None (fp32). ``auto`` on a device without
    :func:`bf16_units` is fp32, said once per process on stderr.

    Raises:
        ConfigError: :data:`~agents.training.config.PRECISION_ENV` holds an unknown value.
        ValueError: an unknown ``precision``.
    """
    setting = precision_setting(precision)
    if setting == "fp32":
        return None
    if setting == "bf16":
        return th.bfloat16
    if setting != "auto":
        raise ValueError(f"unknown precision {setting!r}; allowed: auto, bf16, fp32")
    device = th.device(device)
    if bf16_units(device):
        return th.bfloat16
    line = (
        f"precision auto: the {device.type} has no bf16 units ({', '.join(BF16_CPU_UNITS)}): training in fp32 "
        f"(precision: bf16 or {PRECISION_ENV}=bf16 forces bf16)"
    )
    if line not in _said:
        _said.add(line)
        print(line, file=sys.stderr)
    return None


def model_class(trainer: str) -> type[MaskablePPO]:
    """The class a run's checkpoints load as: :class:`LeanMaskablePPO` for ``jamb-train``'s runs (their
    config's ``trainer``, always ``lean`` once validated), sb3-contrib's ``MaskablePPO`` for ``sb3``, what
    :func:`agents.training.runs.resume_model` is given for self-play runs (their record names no trainer).

    Raises:
        ValueError: another trainer name.
    """
    if trainer == "sb3":
        return MaskablePPO
    if trainer == "lean":
        return LeanMaskablePPO
    raise ValueError(f"unknown trainer {trainer!r}; allowed: lean, sb3")


def _compiled_call(compiled, batch: tuple, clip, clip_vf):
    """``compiled(*batch, clip, clip_vf)``; a failure of torch.compile itself (TorchDynamo or
    Inductor: the first call compiles) as :class:`CompileFailed`, one line."""
    try:
        return compiled(*batch, clip, clip_vf)
    except Exception as exc:
        if not type(exc).__module__.startswith(("torch._dynamo", "torch._inductor")):
            raise
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise CompileFailed(
            f"compile: true: torch.compile could not build the update ({type(exc).__name__}: {first[:200]}); "
            "fix the C++ compiler (the one $CXX names, else g++) or set compile: false"
        ) from exc


class LeanMaskablePPO(MaskablePPO):
    """``MaskablePPO`` with the lean rollout and update (module docstring); same
    constructor, same arguments, same files. Needs a ``Discrete`` action space, a Box
    observation and an env with ``action_masks()`` (``JambVecEnv``, or SB3's VecEnvs of
    ``JambEnv``); ``use_masking`` must stay True. ``precision`` (auto, bf16, fp32: module
    docstring) is not saved with the model: a loaded one trains in fp32 until it is set."""

    #: The precision setting (:func:`autocast_dtype`); ``jamb-train`` sets the config's.
    precision = "fp32"
    #: torch's CPU threads (``torch_threads``), set again before each rollout and update: numba's OpenMP
    #: pool (JambVecEnv steps 256 games or more in parallel) resets OpenMP's thread count when it starts.
    #: None: left as they are.
    torch_threads: int | None = None
    _amp: th.dtype | None = None  # the autocast dtype of the current rollout or update (None: fp32)
    #: ``compile`` of the config: the minibatch loss (:meth:`_minibatch_loss`) through ``torch.compile``.
    compile_update = False
    _compiled = None  # (autocast dtype, the compiled loss) of this process

    def __init__(
        self, *args, precision: str = "fp32", torch_threads: int | None = None, compile_update: bool = False, **kwargs
    ):
        self.precision, self.torch_threads, self.compile_update = precision, torch_threads, compile_update
        super().__init__(*args, **kwargs)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "precision", "torch_threads", "compile_update", "_amp", "_compiled"]

    def _prepare(self) -> None:
        """Before a rollout or an update: the precision (:func:`autocast_dtype`) and the threads."""
        self._amp = autocast_dtype(self.precision, self.device)
        if self.torch_threads is not None and th.get_num_threads() != self.torch_threads:
            th.set_num_threads(self.torch_threads)

    def _obs_tensor(self, obs: np.ndarray) -> th.Tensor:
        """Observations (B, obs_dim) on the model's device: fp32, or bf16 under bf16 autocast (the values the
        first layer would cast them to, cast once for both networks)."""
        out = th.as_tensor(obs, device=self.device)
        return out if self._amp is None else out.to(self._amp)

    def _heads(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """``(logits (B, A), values (B,))`` of the policy's actor and critic on ``obs`` (B, obs_dim),
        fp32; the hidden layers under bf16 autocast when ``self._amp`` is set (module docstring)."""
        policy = self.policy
        amp = self._amp
        with th.autocast(self.device.type, dtype=amp) if amp is not None else contextlib.nullcontext():
            features = policy.extract_features(obs)
            if policy.share_features_extractor:
                latent_pi, latent_vf = policy.mlp_extractor(features)
            else:
                latent_pi = policy.mlp_extractor.forward_actor(features[0])
                latent_vf = policy.mlp_extractor.forward_critic(features[1])
        if amp is not None:
            latent_pi, latent_vf = latent_pi.float(), latent_vf.float()
        return policy.action_net(latent_pi), policy.value_net(latent_vf).flatten()

    @staticmethod
    def _masked_log_probs(logits: th.Tensor, masks: th.Tensor) -> th.Tensor:
        """log-probabilities (B, A) of the masked distribution (illegal actions ~ -1e8)."""
        return F.log_softmax(th.where(masks, logits, th.full_like(logits, MASKED_LOGIT)), dim=1)

    def _minibatch_loss(
        self, obs, masks, actions, old_values, old_log_probs, adv, returns, clip_range, clip_range_vf
    ) -> tuple[th.Tensor, ...]:
        """SB3's PPO loss on one minibatch, term for term (module docstring): ``(loss,
        policy_loss, value_loss, entropy_loss, approx_kl, clip_fraction)``, 0-d tensors, the
        last two without gradient. ``obs`` (B, obs_dim), ``masks`` (B, A) bool, ``actions``
        (B, 1) long, the rest (B,) fp32; ``clip_range`` a float (or a 0-d tensor when compiled)."""
        logits, values = self._heads(obs)
        logp_all = self._masked_log_probs(logits, masks)
        log_prob = logp_all.gather(1, actions).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(1)
        if self.normalize_advantage:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        log_ratio = log_prob - old_log_probs
        ratio = th.exp(log_ratio)
        policy_loss = -th.min(adv * ratio, adv * th.clamp(ratio, 1 - clip_range, 1 + clip_range)).mean()
        if clip_range_vf is None:
            values_pred = values
        else:
            values_pred = old_values + th.clamp(values - old_values, -clip_range_vf, clip_range_vf)
        value_loss = F.mse_loss(returns, values_pred)
        entropy_loss = -th.mean(entropy)
        loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss
        with th.no_grad():
            approx_kl = th.mean((ratio - 1) - log_ratio)
            clip_fraction = th.mean((th.abs(ratio - 1) > clip_range).float())
        return loss, policy_loss, value_loss, entropy_loss, approx_kl, clip_fraction

    def _loss_function(self, clip_range, clip_range_vf):
        """``loss_of(obs, masks, actions, old_values, old_log_probs, adv, returns)``: :meth:`_minibatch_loss`
        with this update's clip ranges, or (``compile_update``) its ``torch.compile``d form, compiled once per
        process and precision; the clip ranges go to it as 0-d tensors (made once per update), so a schedule
        that changes them does not compile it again."""
        if not self.compile_update:
            return lambda *batch: self._minibatch_loss(*batch, clip_range, clip_range_vf)
        if self._compiled is None or self._compiled[0] != self._amp:
            self._compiled = (self._amp, th.compile(self._minibatch_loss))
        compiled = self._compiled[1]
        clip = th.tensor(float(clip_range), device=self.device)
        clip_vf = None if clip_range_vf is None else th.tensor(float(clip_range_vf), device=self.device)
        return lambda *batch: _compiled_call(compiled, batch, clip, clip_vf)

    def collect_rollouts(self, env, callback, rollout_buffer, n_rollout_steps: int, use_masking: bool = True) -> bool:
        """Fill ``rollout_buffer`` with ``n_rollout_steps`` steps of every env (SB3's contract:
        False if a callback stopped the rollout)."""
        if not use_masking or not isinstance(self.action_space, spaces.Discrete):
            raise ValueError("the lean trainer plays Discrete actions with their legal masks (use_masking=True)")
        assert self._last_obs is not None, "No previous observation was provided"
        self._prepare()
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()
        device = self.device
        for _ in range(n_rollout_steps):
            # JambVecEnv's masks in one call; SB3's VecEnvs (vec_env: dummy, subproc) ask each JambEnv
            masks = env.action_masks() if hasattr(env, "action_masks") else get_action_masks(env)
            masks = np.asarray(masks, dtype=bool)
            with th.no_grad():
                logits, values = self._heads(self._obs_tensor(self._last_obs))
                logp_all = self._masked_log_probs(logits, th.as_tensor(masks, device=device))
                actions = th.multinomial(logp_all.exp(), 1)
                log_probs = logp_all.gather(1, actions).squeeze(1)
            actions = actions.cpu().numpy()
            new_obs, rewards, dones, infos = env.step(actions.ravel())
            self.num_timesteps += env.num_envs
            callback.update_locals(locals())
            if not callback.on_step():
                return False
            self._update_info_buffer(infos, dones)
            if any(info.get("TimeLimit.truncated", False) for info in infos):
                raise RuntimeError(
                    "a Jamb game was truncated: the trainer has no time-limit bootstrapping "
                    "(Jamb games end with a full sheet)"
                )
            rollout_buffer.add(
                self._last_obs, actions, rewards, self._last_episode_starts, values, log_probs, action_masks=masks
            )
            self._last_obs = new_obs
            self._last_episode_starts = dones
        with th.no_grad():
            _, last_values = self._heads(self._obs_tensor(new_obs))
        rollout_buffer.compute_returns_and_advantage(last_values=last_values, dones=dones)
        callback.on_rollout_end()
        return True

    def train(self) -> None:
        """One PPO update on the full rollout buffer: SB3's loss and logs (module docstring)."""
        self._prepare()
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)
        clip_range_vf = None if self.clip_range_vf is None else self.clip_range_vf(self._current_progress_remaining)
        buf = self.rollout_buffer
        size = buf.buffer_size * buf.n_envs

        def flat(a: np.ndarray, dtype=th.float32) -> th.Tensor:
            return th.as_tensor(buf.swap_and_flatten(a), device=self.device).to(dtype)

        obs = flat(buf.observations, self._amp or th.float32)  # bf16: cast once, not at each minibatch
        actions = flat(buf.actions, th.long).reshape(size, 1)
        old_values, old_log_probs = flat(buf.values).reshape(size), flat(buf.log_probs).reshape(size)
        advantages, returns = flat(buf.advantages).reshape(size), flat(buf.returns).reshape(size)
        masks = flat(buf.action_masks, th.bool).reshape(size, -1)

        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        approx_kl_divs: list[float] = []
        continue_training = True
        loss_of = self._loss_function(clip_range, clip_range_vf)
        for _epoch in range(self.n_epochs):
            approx_kl_divs = []
            indices = np.random.permutation(size)  # SB3's minibatch order: its buffer draws one per epoch
            for start in range(0, size, self.batch_size):
                idx = th.as_tensor(indices[start : start + self.batch_size], device=self.device)
                batch = (obs[idx], masks[idx], actions[idx], old_values[idx], old_log_probs[idx])
                loss, policy_loss, value_loss, entropy_loss, kl, clipped = loss_of(
                    *batch, advantages[idx], returns[idx]
                )
                approx_kl_div = float(kl)
                clip_fractions.append(float(clipped))
                pg_losses.append(policy_loss.item())
                value_losses.append(value_loss.item())
                entropy_losses.append(entropy_loss.item())
                approx_kl_divs.append(approx_kl_div)
                if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
                    continue_training = False
                    break
                self.policy.optimizer.zero_grad()
                loss.backward()
                th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.policy.optimizer.step()
            self._n_updates += 1
            if not continue_training:
                break
        # SB3's buffer is flattened in place by its own get(); the lean update leaves it as it was
        explained_var = explained_variance(buf.values.flatten(), buf.returns.flatten())
        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/loss", loss.item())
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        if clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)
