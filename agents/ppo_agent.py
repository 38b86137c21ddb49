"""A trained MaskablePPO checkpoint as an agent (deterministic, masked)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class PPOAgent:
    """Acts with ``model.predict(observation, action_masks=mask, deterministic=True)``."""

    def __init__(self, path: str | Path, device: str = "cpu"):
        from sb3_contrib import MaskablePPO

        self.path = Path(path)
        self.name = self.path.stem if self.path.stem not in ("final_model", "best_model") else self.path.parent.name
        self.model = MaskablePPO.load(self.path, device=device)

    def act(self, env, observation: np.ndarray, mask: np.ndarray) -> int:
        if observation.shape != self.model.observation_space.shape:
            raise ValueError(
                f"model {self.path} expects observations of shape {self.model.observation_space.shape}, "
                f"the env gives {observation.shape} (another ruleset or env version?)"
            )
        action, _ = self.model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)
