"""A policy trained by RLlib (``jamb-train --engine rllib``) as an agent: ``agents.load("rllib:<path>")``.

``<path>`` is a run folder (its newest checkpoint), a checkpoint folder
(``<run>/checkpoints/checkpoint_<steps>``) or the RLModule folder inside one
(``.../learner_group/learner/rl_module/default_policy``). Only the RLModule is loaded
(``RLModule.from_checkpoint``: torch and the module's class; no Ray runtime, no
Algorithm), so an evaluation worker loads it in about two seconds.

The module is RLlib's action-masking PPO module
(``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``)
on the ``Jamb-v1`` observation: it reads ``{"observations": float32 (B, D), "action_mask":
int8 (B, A)}`` and gives masked logits ``(B, A)``. The agent plays the legal action of
highest logit (greedy, deterministic); the legal mask it is given is applied again, so an
illegal action is never chosen.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from agents.base import checked_mask

RLLIB_MISSING = 'RLlib is not installed: make install-ray (or pip install -e ".[ray]")'
#: Written last into a checkpoint folder: a checkpoint without it is incomplete.
CHECKPOINT_STATE = "jamb_state.json"
CHECKPOINTS = "checkpoints"
CHECKPOINT_PREFIX = "checkpoint_"
#: The RLModule of the default policy inside an Algorithm checkpoint.
MODULE_SUBPATH = Path("learner_group") / "learner" / "rl_module" / "default_policy"
#: The module id of the policy every seat shares in self-play runs (``players`` set).
SELFPLAY_MODULE_ID = "shared_policy"
SELFPLAY_MODULE_SUBPATH = MODULE_SUBPATH.parent / SELFPLAY_MODULE_ID


def module_subpath(checkpoint: Path) -> Path:
    """The RLModule folder inside an Algorithm checkpoint: the self-play run's shared
    policy if there is one, else the default policy's."""
    return SELFPLAY_MODULE_SUBPATH if (Path(checkpoint) / SELFPLAY_MODULE_SUBPATH).is_dir() else MODULE_SUBPATH


class RLlibUnavailable(RuntimeError):
    """``ray.rllib`` cannot be imported (the ``ray`` extra is not installed)."""


def import_rllib():
    """The ``ray.rllib`` module, or :class:`RLlibUnavailable` saying how to install it."""
    try:
        import ray.rllib
        import ray.rllib.core.rl_module.rl_module  # noqa: F401  (what loading a checkpoint needs)
    except ImportError as exc:
        raise RLlibUnavailable(f"{RLLIB_MISSING} ({exc})") from exc
    return ray.rllib


def checkpoint_step(path: Path) -> int | None:
    """The env steps in a checkpoint folder's name ``checkpoint_<steps>`` (None for other names)."""
    name = Path(path).name
    digits = name[len(CHECKPOINT_PREFIX) :]
    return int(digits) if name.startswith(CHECKPOINT_PREFIX) and digits.isascii() and digits.isdigit() else None


def checkpoint_problem(path: Path) -> str | None:
    """Why ``path`` is not a complete checkpoint folder, or None when it is one (its
    :data:`CHECKPOINT_STATE` written last is readable and the module folder is there)."""
    path = Path(path)
    if not path.is_dir():
        return "not a folder"
    try:
        from jamb_env.utils.files import read_regular_bytes

        state = json.loads(read_regular_bytes(path / CHECKPOINT_STATE).decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: JSON nested too deep
        return f"no readable {CHECKPOINT_STATE} (an incomplete checkpoint)"
    if not isinstance(state, dict) or not isinstance(state.get("env_steps"), int):
        return f"{CHECKPOINT_STATE} has no env_steps"
    for key in ("env_steps", "iteration"):  # a forged or damaged state: "x", -5, 1e400 (inf), true
        value = state.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{CHECKPOINT_STATE}: {key} must be an integer >= 0, got {value!r:.40}"
    if not (path / module_subpath(path) / "metadata.json").is_file():
        return f"no RLModule in {module_subpath(path)}"
    return None


def checkpoints(run_dir: Path) -> list[Path]:
    """The complete checkpoint folders of a run (``<run>/checkpoints/checkpoint_<steps>``), newest first."""
    folder = Path(run_dir) / CHECKPOINTS
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if checkpoint_step(p) is not None and checkpoint_problem(p) is None]
    return sorted(found, key=checkpoint_step, reverse=True)


def find_module_dir(path: str | Path) -> Path:
    """The RLModule folder for ``path``: a run folder (its newest complete checkpoint), a
    checkpoint folder or an RLModule folder.

    Raises:
        FileNotFoundError: nothing there, or no RLlib checkpoint in it (the message says what
            was expected).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"no RLlib checkpoint at {path}: no such file or folder "
            "(give rllib:<run folder>, rllib:<run>/checkpoints/checkpoint_<steps> or its RLModule folder)"
        )
    if (path / "class_and_ctor_args.pkl").is_file() and any(path.glob("module_state*")):
        return path
    if (path / module_subpath(path) / "class_and_ctor_args.pkl").is_file():
        problem = checkpoint_problem(path) if checkpoint_step(path) is not None else None
        if problem is not None:
            raise FileNotFoundError(
                f"{path} is an incomplete RLlib checkpoint ({problem}); use an older one in {path.parent}"
            )
        return path / module_subpath(path)
    found = checkpoints(path)
    if found:
        return found[0] / module_subpath(found[0])
    raise FileNotFoundError(
        f"no RLlib checkpoint in {path}: expected a run folder of jamb-train --engine rllib (with "
        f"{CHECKPOINTS}/{CHECKPOINT_PREFIX}<steps>/), a checkpoint folder or an RLModule folder"
    )


class RLlibAgent:
    """Plays an RLlib PPO policy: the legal action of highest logit (deterministic).

    Args:
        path: run folder, checkpoint folder or RLModule folder (:func:`find_module_dir`).
        ruleset: the ruleset it will play; checked against the module's spaces.

    Raises:
        RLlibUnavailable: RLlib is not installed.
        FileNotFoundError: no checkpoint at ``path``.
        ValueError: the checkpoint cannot be loaded, or its spaces do not fit ``ruleset``.
    """

    def __init__(self, path: str | Path, ruleset: str | None = None):
        self.path = Path(path)
        self.module_dir = find_module_dir(self.path)
        import_rllib()
        from ray.rllib.core.rl_module.rl_module import RLModule

        ckpt = self.module_dir.parents[3] if len(self.module_dir.parents) > 3 else self.module_dir
        step = checkpoint_step(ckpt)
        name = f"rllib:{ckpt.parent.parent.name}@{step}" if step is not None else f"rllib:{self.path.name}"
        try:
            module = RLModule.from_checkpoint(
                str(self.module_dir.resolve())
            )  # a relative path is read as a URI without a scheme
        except Exception as exc:  # pickle, torch and RLlib raise assorted errors for damaged folders
            raise ValueError(
                f"{self.module_dir} is not a loadable RLlib RLModule: {type(exc).__name__}: {str(exc)[:300]}"
            ) from exc
        self._setup(module, name)
        if ruleset is not None:
            from jamb_env import JambEnv
            from jamb_env.multiplayer import observation_size

            env = JambEnv(ruleset)
            sizes = {env.observation_space.shape} | {
                (observation_size(env.ruleset, n, scoring),) for n in range(2, 6) for scoring in ("separate", "shared")
            }  # a self-play module plays a seat
            if self.observation_shape not in sizes or env.action_space.n != self.num_actions:
                raise ValueError(
                    f"RLlib policy {self.path} acts on observations {self.observation_shape} and {self.num_actions} "
                    f"actions; ruleset {env.ruleset.name} has {env.observation_space.shape} and "
                    f"{env.action_space.n} (trained on another ruleset?)"
                )

    @classmethod
    def from_module(cls, module, name: str = "rllib") -> RLlibAgent:
        """An agent playing an RLModule already in memory (the training run's evaluation
        uses it, setting the learner's weights into ``module`` before each evaluation)."""
        agent = cls.__new__(cls)
        agent.path = agent.module_dir = None
        agent._setup(module, name)
        return agent

    def _setup(self, module, name: str) -> None:
        import torch

        self.module, self.name, self._torch = module, name, torch
        module.eval()
        space = getattr(module, "observation_space", None)
        try:
            self.observation_shape = tuple(space["observations"].shape)
            self.observation_size = int(
                np.prod(self.observation_shape)
            )  # play_match gives a self-play module the whole observation
            self.num_actions = int(module.action_space.n)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(
                f"{self.module_dir or name}: not a Jamb action-masking module (observation space {space})"
            ) from exc

    def logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float32 ``(N, A)``: the module's masked logits for observations float32 ``(N, D)``
        and legal masks bool/int ``(N, A)`` (illegal entries are -inf).

        Raises:
            ValueError: shapes that do not fit the module.
        """
        obs = np.asarray(observations, dtype=np.float32)
        mask = np.asarray(masks).astype(bool)
        if obs.ndim != 2 or obs.shape[1:] != self.observation_shape or mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(
                f"expected observations (N, {self.observation_shape[0]}) and masks (N, {self.num_actions}), "
                f"got {obs.shape} and {mask.shape}"
            )
        torch = self._torch
        batch = {
            "obs": {"observations": torch.from_numpy(obs), "action_mask": torch.from_numpy(mask.astype(np.float32))}
        }
        with torch.no_grad():
            out = self.module.forward_inference(batch)
        logits = out["action_dist_inputs"].numpy().astype(np.float32, copy=True)
        logits[~mask] = -np.inf
        return logits

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """int64 ``(N,)``: the greedy legal action of each of N games (float32 ``(N, D)``
        observations, ``(N, A)`` masks; a row with no legal action gets 0)."""
        return self.logits(observations, masks).argmax(axis=1).astype(np.int64)

    def act(self, env, observation: np.ndarray, mask: np.ndarray) -> int:
        """The greedy legal action for one observation float32 ``(D,)`` and mask ``(A,)``."""
        return int(self.act_batch(np.asarray(observation)[None], checked_mask(env, mask)[None])[0])

    def action_probs(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float ``(A,)``: the policy's masked action distribution for one observation."""
        z = self.logits(np.asarray(observation)[None], np.asarray(mask)[None])[0].astype(np.float64)
        z = np.exp(z - z.max())
        return z / z.sum()
