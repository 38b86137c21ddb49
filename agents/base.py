"""The agent interface."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from jamb_env import JambEnv


class Agent(Protocol):
    """Returns a legal action index for the env's current state.

    ``observation`` is the env's observation, ``mask`` its bool legal-action mask; the
    env gives read access to the game state (``env.game``, ``env.ruleset``).
    """

    def act(self, env: JambEnv, observation: np.ndarray, mask: np.ndarray) -> int: ...
