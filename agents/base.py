"""The agent interface."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from jamb_env import JambEnv


class Agent(Protocol):
    """Returns a legal action index for the env's current state.

    ``observation`` is the env's observation, ``mask`` its bool legal-action mask
    (``env.action_masks()``; None: that one), read through :func:`checked_mask`; the env
    gives read access to the game state (``env.game``, ``env.ruleset``). The policies
    (random, ppo, hybrid, rllib) choose within the mask; the planners (greedy, expectimax,
    search, optimal, columnwise, critic) plan from the game state, so a mask of your own
    narrower than the env's does not bind them.
    """

    def act(self, env: JambEnv, observation: np.ndarray, mask: np.ndarray) -> int: ...


def checked_mask(env, mask) -> np.ndarray:
    """``mask`` (None: ``env.action_masks()``) as a bool ``(A,)`` array with a legal action.

    Raises:
        ValueError: not one row of flags, or no legal action (the game is over:
            a policy would otherwise answer an action outside the mask).
    """
    mask = np.asarray(env.action_masks() if mask is None else mask)
    if mask.ndim != 1 or mask.dtype.kind not in "biu":
        raise ValueError(f"mask must be one flag (bool or 0/1) per action, got {mask.dtype} of shape {mask.shape}")
    if not mask.any():
        raise ValueError("no legal action: the game is over")
    return mask.astype(bool, copy=False)
