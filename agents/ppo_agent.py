"""A trained MaskablePPO checkpoint as an agent (deterministic, masked)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

V1_SEGMENTS = ("target", "cell_reach", "cell_hold")


class PPOAgent:
    """Acts with ``model.predict(observation, action_masks=mask, deterministic=True)``.

    A model trained on ``Jamb-v0`` observations (no turn features) also plays on the
    ``Jamb-v1`` env: given ``ruleset``, the agent recognises its observation size and drops
    the v1 segments before predicting.
    """

    def __init__(self, path: str | Path, ruleset: str | None = None, device: str = "cpu"):
        from sb3_contrib import MaskablePPO

        self.path = Path(path)
        self.name = self.path.stem if self.path.stem not in ("final_model", "best_model") else self.path.parent.name
        try:
            self.model = MaskablePPO.load(self.path, device=device)
        except Exception as exc:  # SB3 raises assorted errors for files that are not its models
            raise ValueError(f"{self.path} is not a MaskablePPO model file: {exc}") from exc
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
        return observation

    def act(self, env, observation: np.ndarray, mask: np.ndarray) -> int:
        action, _ = self.model.predict(self._model_input(observation), action_masks=mask, deterministic=True)
        return int(action)

    def action_probs(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float ``(A,)``: the policy's masked action distribution for one observation."""
        import torch

        obs, _ = self.model.policy.obs_to_tensor(self._model_input(observation))
        with torch.no_grad():
            dist = self.model.policy.get_distribution(obs, action_masks=mask)
        return dist.distribution.probs[0].cpu().numpy()
