"""RL Baselines3 Zoo (``rl_zoo3``) with MaskablePPO: the zoo algorithm ``ppo_mask``.

The zoo knows no masked algorithm, and its evaluation (``EvalCallback``, the Optuna
trials' ``TrialEvalCallback``) and ``enjoy`` call ``model.predict(obs)`` without masks. Here
the mask travels in the observation instead: the envs are wrapped in
:class:`jamb_env.wrappers.MaskInObservation` (``env_wrapper`` in
``agents/training/configs/zoo/ppo_mask.yml``, which the zoo applies to the training, evaluation and enjoy
envs alike), and :class:`ZooMaskablePPO` is a MaskablePPO whose ``predict`` reads
``observation["action_mask"]`` when it is given no ``action_masks``. So every policy call
the zoo makes is masked, with no change to the zoo's code. Training rollouts take the
masks from ``action_masks()`` as MaskablePPO always does.

    register()                     add ppo_mask to rl_zoo3 (ALGOS, the Optuna sampler and converter)
    ZooMaskablePPO                 the algorithm (saved models load with sb3_contrib.MaskablePPO too)
    sample_ppo_mask_params(...)    the zoo's Optuna sampler: jamb-tune's MaskablePPO space

The command is ``jamb-zoo`` (agents/apps/cli/zoo.py): it calls :func:`register` and then hands
its arguments to rl_zoo3's ``train`` or ``enjoy``. ``python -m rl_zoo3.train --algo
ppo_mask`` cannot work, with or without ``--gym-packages``: the zoo checks ``--algo``
against ``ALGOS`` before it imports those packages. Documented in docs/tools.md ("RL
Baselines3 Zoo").
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sb3_contrib import MaskablePPO

from agents.training.config import leaves_one_sample
from agents.training.tuning import NETS

#: The name of MaskablePPO in the zoo (``--algo ppo_mask``; hyper-parameters in
#: agents/training/configs/zoo/ppo_mask.yml).
ALGO = "ppo_mask"


class ZooMaskablePPO(MaskablePPO):
    """MaskablePPO whose :meth:`predict` takes the legal-action mask from the observation
    (``observation["action_mask"]``, :class:`jamb_env.wrappers.MaskInObservation` or
    ``mask_in_observation=True``) when it is given none, so callers that know nothing of
    masks (the zoo's evaluation and ``enjoy``, SB3's ``evaluate_policy``) play legal moves.
    Training is MaskablePPO's own (masks from ``action_masks()``)."""

    def _setup_model(self) -> None:
        """MaskablePPO's, after checking the rollout settings a zoo hyper-parameter may
        give (``--hyperparams n_steps:0``, a ``-conf`` file): ValueError, which jamb-zoo
        reports with exit status 2, for no steps per rollout or minibatch, or a rollout
        leaving a last minibatch of one sample (:func:`agents.training.config.leaves_one_sample`).
        MaskablePPO checks neither: no steps failed in its first rollout, one sample made
        the weights NaN."""
        for name in ("n_steps", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"ppo_mask hyper-parameter {name} must be a positive integer, got {value!r}")
        rollout = self.n_steps * self.n_envs
        if getattr(self, "normalize_advantage", True) and leaves_one_sample(rollout, self.batch_size):
            raise ValueError(
                f"ppo_mask hyper-parameters: {self.n_envs} envs x n_steps {self.n_steps} = "
                f"{rollout} steps in minibatches of batch_size {self.batch_size} leave a last minibatch of one step "
                "(its advantage normalisation makes the weights NaN); change n_steps or batch_size"
            )
        super()._setup_model()

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = False, action_masks=None):
        """MaskablePPO's ``predict``; ``action_masks`` defaults to ``observation["action_mask"]``.

        Raises:
            ValueError: no ``action_masks`` and an observation without ``"action_mask"`` (an
                env not wrapped in MaskInObservation): an unmasked action would end the game.
        """
        if action_masks is None:
            if not (isinstance(observation, dict) and "action_mask" in observation):
                raise ValueError(
                    "ZooMaskablePPO.predict was given no action_masks and the observation carries no 'action_mask': "
                    "wrap the env in jamb_env.wrappers.MaskInObservation (env_wrapper in "
                    "agents/training/configs/zoo/ppo_mask.yml) "
                    "or pass action_masks=env.action_masks()"
                )
            action_masks = np.asarray(observation["action_mask"]).astype(bool)
        return super().predict(observation, state, episode_start, deterministic, action_masks=action_masks)


def convert_ppo_mask_params(params: dict[str, Any]) -> dict[str, Any]:
    """A trial's sampled values (``trial.params``) as MaskablePPO keyword arguments (the
    zoo's ``HYPERPARAMS_CONVERTER``: ``--storage ... --trial-id`` loads a trial with it)."""
    out = {k: v for k, v in params.items() if k != "net_arch"}
    if "net_arch" in params:
        out["policy_kwargs"] = {"net_arch": list(NETS[params["net_arch"]])}
    return out


def sample_ppo_mask_params(trial, n_actions: int, n_envs: int, additional_args: dict) -> dict[str, Any]:
    """The zoo's Optuna sampler for ``ppo_mask`` (``HYPERPARAMS_SAMPLER``): the MaskablePPO
    space of ``jamb-tune`` (agents/training/tuning.py), without its ``reward_scale`` (the
    zoo config normalizes rewards with VecNormalize instead). The zoo's own PPO space (batch
    sizes down to 4 with up to 20 epochs) makes a trial many times slower."""
    params = {
        "learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-3, log=True),
        "n_steps": trial.suggest_categorical("n_steps", [128, 256, 512]),
        "batch_size": trial.suggest_categorical("batch_size", [128, 256, 512]),
        "n_epochs": trial.suggest_categorical("n_epochs", [3, 5, 10]),
        "gamma": trial.suggest_categorical("gamma", [0.99, 0.995, 1.0]),
        "gae_lambda": trial.suggest_categorical("gae_lambda", [0.9, 0.95, 0.98]),
        "ent_coef": trial.suggest_float("ent_coef", 1e-4, 3e-2, log=True),
        "net_arch": trial.suggest_categorical("net_arch", list(NETS)),
    }
    return convert_ppo_mask_params(params)


def register() -> None:
    """Add ``ppo_mask`` (:class:`ZooMaskablePPO`) to rl_zoo3's ``ALGOS`` and its Optuna
    sampler and converter to ``rl_zoo3.hyperparams_opt`` (again is harmless); importing
    ``jamb_env`` registers the env ids (``Jamb-<preset>-v1``).

    Raises:
        ImportError: rl_zoo3 is not installed (the message names the ``zoo`` extra).
    """
    try:
        from rl_zoo3 import hyperparams_opt, utils
    except ImportError as exc:
        raise ImportError(f"rl-zoo (rl_zoo3) is not installed: pip install -e '.[zoo]' ({exc})") from exc
    import jamb_env  # noqa: F401  (registers Jamb-v1 and Jamb-<preset>-v1)

    utils.ALGOS[ALGO] = ZooMaskablePPO
    hyperparams_opt.HYPERPARAMS_SAMPLER[ALGO] = sample_ppo_mask_params
    hyperparams_opt.HYPERPARAMS_CONVERTER[ALGO] = convert_ppo_mask_params
