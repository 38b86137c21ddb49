"""A trained MaskablePPO checkpoint as an agent (deterministic, masked)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class PPOAgent:
    """Acts with ``model.predict(observation, action_masks=mask, deterministic=True)``."""

    def __init__(self, path: str | Path, ruleset: str | None = None, device: str = "cpu"):
        from sb3_contrib import MaskablePPO

        self.path = Path(path)
        self.name = self.path.stem if self.path.stem not in ("final_model", "best_model") else self.path.parent.name
        try:
            self.model = MaskablePPO.load(self.path, device=device)
        except Exception as exc:  # SB3 raises assorted errors for files that are not its models
            raise ValueError(f"{self.path} is not a MaskablePPO model file: {exc}") from exc
        if ruleset is not None:
            from jamb_env import JambEnv

            env = JambEnv(ruleset)
            if self.model.observation_space.shape != env.observation_space.shape or self.model.action_space != env.action_space:
                raise ValueError(
                    f"model {self.path} acts on observations {self.model.observation_space.shape} and "
                    f"{self.model.action_space}; ruleset {env.ruleset.name} has {env.observation_space.shape} and "
                    f"{env.action_space} (trained on another ruleset?)"
                )

    def act(self, env, observation: np.ndarray, mask: np.ndarray) -> int:
        if observation.shape != self.model.observation_space.shape:
            raise ValueError(
                f"model {self.path} expects observations of shape {self.model.observation_space.shape}, "
                f"the env gives {observation.shape} (another ruleset or env version?)"
            )
        action, _ = self.model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)
