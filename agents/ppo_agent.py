"""A trained MaskablePPO checkpoint as an agent (deterministic, masked).

The file is loaded as data (:func:`agents.model_files.load_model`): a model file holding
pickled code is refused unless ``trusted``. A model trained under
``VecNormalize(norm_obs=True)`` plays on the observations it was trained on: its
statistics (``vecnormalize.pkl`` beside it, or in RL Baselines3 Zoo's layout,
:func:`agents.model_files.normalization_file`) are applied, which needs ``trusted`` (the
file is a pickle); without them such a model is refused rather than played wrongly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import checked_mask

V1_SEGMENTS = ("target", "cell_reach", "cell_hold")


class PPOAgent:
    """Acts with ``model.predict(observation, action_masks=mask, deterministic=True)``.

    A model trained on ``Jamb-v0`` observations (no turn features) also plays on the
    ``Jamb-v1`` env: given ``ruleset``, the agent recognises its observation size and drops
    the v1 segments before predicting.

    Args:
        path: a MaskablePPO ``.zip``. ruleset: the ruleset it plays (checked against the
            model's spaces). device: torch device. trusted: load the file as SB3 does,
            running the pickles it holds, and apply the VecNormalize statistics found with
            it (module docstring); only for files from a source you trust.

    Raises:
        UntrustedModelError: (a ValueError) the file holds pickled code, or comes with
            VecNormalize statistics (a pickle), and ``trusted`` is False.
        ValueError: not a MaskablePPO model file; a model of another ruleset; a model
            trained on normalised observations without its statistics.

    Warns:
        RulesetMismatchWarning: the file says it was trained on other rules of the same
            shapes (models saved since the stamp, :func:`agents.model_files.stamp_ruleset`).
    """

    def __init__(self, path: str | Path, ruleset: str | None = None, device: str = "cpu", trusted: bool = False):
        from agents.model_files import UntrustedModelError, check_ruleset, load_model

        self.path = Path(path)
        self.name = self.path.stem if self.path.stem not in ("final_model", "best_model") else self.path.parent.name
        try:
            self.model = load_model(self.path, trusted=trusted, device=device)
        except UntrustedModelError:
            raise
        except Exception as exc:  # SB3 raises assorted errors for files that are not its models
            raise ValueError(f"{self.path} is not a MaskablePPO model file: {exc}") from exc
        self._normalization = self._statistics(trusted)
        self._keep = None
        self._multiplayer = False
        if ruleset is not None:
            from jamb_env import JambEnv

            env = JambEnv(ruleset)
            v0 = JambEnv(ruleset, turn_features=False)
            if self.model.observation_space.shape == v0.observation_space.shape != env.observation_space.shape:
                keep = np.ones(env.observation_space.shape[0], dtype=bool)
                for name in V1_SEGMENTS:
                    start, size = env.observation_layout[name][:2]
                    keep[start : start + size] = False
                self._keep = keep
            elif self._multiplayer_model(env):
                self._multiplayer = True  # trained on a multiplayer seat: it reads the whole multiplayer observation
            elif (
                self.model.observation_space.shape != env.observation_space.shape
                or self.model.action_space != env.action_space
            ):
                raise ValueError(
                    f"model {self.path} acts on observations {self.model.observation_space.shape} and "
                    f"{self.model.action_space}; ruleset {env.ruleset.name} has {env.observation_space.shape} and "
                    f"{env.action_space} (trained on another ruleset?)"
                )
            check_ruleset(self.model, env.ruleset, self.path)

    def _statistics(self, trusted: bool):
        """The VecNormalize statistics the model needs (None: it reads raw observations).

        Raises:
            UntrustedModelError: statistics found, not ``trusted`` (they are a pickle).
            ValueError: the model normalised its observations and no statistics are found.
        """
        from agents.model_files import (
            NORMALIZATION_FILE,
            TRUST_HINT,
            UntrustedModelError,
            load_normalization,
            normalization_file,
            normalizes_observations,
        )

        needs = normalizes_observations(self.model)
        found = normalization_file(self.path)
        if found is None:
            if needs:
                raise ValueError(
                    f"{self.path} was trained under VecNormalize(norm_obs=True) and no {NORMALIZATION_FILE} is "
                    "beside it: played on raw observations it would play blind; put its run's statistics beside "
                    f"it and load it with {TRUST_HINT}"
                )
            return None
        if not needs and getattr(self.model, "_last_original_obs", None) is not None:
            return None  # trained under VecNormalize with raw observations (rewards only): nothing to apply
        if not trusted:
            raise UntrustedModelError(
                found, f"the VecNormalize statistics {self.path.name} was trained with are a pickle"
            )
        stats = load_normalization(found)
        return stats if stats.norm_obs else None

    def normalized(self, observations: np.ndarray) -> np.ndarray:
        """``observations`` (``(D,)`` or ``(N, D)``) as the policy reads them: through the
        model's VecNormalize statistics when it has them (float32), else as they are."""
        if self._normalization is None:
            return observations
        return self._normalization.normalize_obs(np.asarray(observations, dtype=np.float32)).astype(np.float32)

    @property
    def observation_size(self) -> int:
        """Length of the observation the model reads (the multiplayer evaluation gives a
        model trained on a seat the whole multiplayer observation, others the solitaire part)."""
        return int(self.model.observation_space.shape[0])

    def _multiplayer_model(self, env) -> bool:
        from jamb_env.multiplayer import observation_size
        from jamb_env.rules import match

        if self.model.action_space != env.action_space:
            return False
        rules = env.ruleset
        return any(
            self.observation_size == observation_size(rules, n, scoring)
            for n in range(match.MIN_PLAYERS, match.MAX_PLAYERS + 1)
            for scoring in match.SCORING_MODES
            if not (scoring == "shared" and rules.derived_columns)
        )

    def _model_input(self, observation: np.ndarray) -> np.ndarray:
        if self._keep is not None and observation.shape == self._keep.shape:
            observation = observation[self._keep]
        if observation.shape != self.model.observation_space.shape:
            raise ValueError(
                f"model {self.path} expects observations of shape {self.model.observation_space.shape}, "
                f"the env gives {observation.shape} "
                + (
                    "(a model of a multiplayer seat: trained for another number of players or scoring?)"
                    if self._multiplayer
                    else "(another ruleset or env version?)"
                )
            )
        return self.normalized(observation)

    def act(self, env, observation: np.ndarray, mask: np.ndarray) -> int:
        mask = checked_mask(env, mask)
        action, _ = self.model.predict(self._model_input(observation), action_masks=mask, deterministic=True)
        return int(action)

    def action_probs(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float ``(A,)``: the policy's masked action distribution for one observation."""
        import torch

        obs, _ = self.model.policy.obs_to_tensor(self._model_input(observation))
        with torch.no_grad():
            dist = self.model.policy.get_distribution(obs, action_masks=mask)
        return dist.distribution.probs[0].cpu().numpy()
