"""Opt-in Gymnasium wrappers for tools that cannot pass the legal-action mask.

``Jamb-v1`` itself is unchanged: an illegal action ends the game with
``JambEnv.ILLEGAL_ACTION_PENALTY`` and an :class:`~jamb_env.IllegalActionWarning`. These
wrappers are for code that samples every index of the action space or reads masks only
from the observation (docs/tools.md, "Tools that do not mask"):

* :class:`LegalActions`: every action index plays; an illegal one is replaced, the same
  way every time, by a legal one. An unmasked policy (CleanRL's ``ppo.py``, SB3's ``PPO``,
  SB3's ``evaluate_policy``) then plays full games and its return is the game score.
* :class:`MaskInObservation`: the observation becomes ``{"action_mask", "observation"}``
  (what ``JambEnv(mask_in_observation=True)`` gives), for tools that build the env from an
  id and a wrapper class only (rl-zoo's ``env_wrapper``, SB3's ``make_vec_env(wrapper_class=...)``).

A legal action passes through both unchanged, so a masked agent plays exactly the game it
plays without them (the same rewards, the same return: the final score).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from jamb_env.engine import doors


def _masks_of(env: gym.Env, wrapper: str):
    try:
        masks = env.get_wrapper_attr("action_masks")
    except AttributeError:
        masks = None
    if not callable(masks) or not isinstance(env.action_space, spaces.Discrete):
        raise ValueError(
            f"{wrapper} wraps an env with a Discrete action space and action_masks() (a Jamb env: "
            f"gymnasium.make('Jamb-v1') or jamb_env.JambEnv), got {env!r}"
        )
    return masks


class LegalActions(gym.Wrapper):
    """Every index of the action space plays: a legal action as it is, an illegal one as
    the first legal action at or after it (counting on from 0 past the last index).

    The map depends only on the action and the state, so an unmasked policy learns on a
    well-defined game (several indices play the same move). ``info["played_action"]`` is
    the index played and ``info["action_replaced"]`` whether it differs from the one given.
    ``action_masks()`` and ``info["action_mask"]`` stay the rules' legal actions, so a
    masked agent through this wrapper plays the game unchanged.

    Raises:
        ValueError: at construction, for an env without ``action_masks()`` or a Discrete
            action space; in :meth:`step`, for an index outside the action space or an
            action that is not one integer (a bool, a float), as at every door.
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self._masks = _masks_of(env, "LegalActions")

    def legal_action(self, action) -> int:
        """The index :meth:`step` plays for ``action`` now (ValueError as step: not one integer,
        or outside the action space)."""
        n = int(self.action_space.n)
        a = doors.check_action(action, n)
        if not 0 <= a < n:
            raise ValueError(f"action {a} is outside the action space 0..{n - 1}")
        legal = np.flatnonzero(self._masks())
        if not len(legal):  # no legal action before reset(): the env's step says so (RuntimeError)
            return a
        return int(legal[np.searchsorted(legal, a) % len(legal)])

    def step(self, action):
        played = self.legal_action(action)
        obs, reward, terminated, truncated, info = self.env.step(played)
        info["played_action"] = played
        info["action_replaced"] = played != int(np.asarray(action).reshape(()))
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The wrapped env's ``action_masks()``: the rules' legal actions (bool)."""
        return self._masks()


class MaskInObservation(gym.ObservationWrapper):
    """Observations ``{"action_mask": int8 (A,), "observation": <the env's>}`` under
    ``Dict({"action_mask": MultiBinary(A), "observation": <the env's space>})``: the same
    values and space as ``JambEnv(mask_in_observation=True)``. Actions and rewards are
    unchanged.

    Raises:
        ValueError: for an env without ``action_masks()`` or a Discrete action space, or
            one whose observation is a Dict already (``mask_in_observation=True``).
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self._masks = _masks_of(env, "MaskInObservation")
        if isinstance(env.observation_space, spaces.Dict):
            raise ValueError(
                "MaskInObservation wraps an env whose observation is the Box alone; this one is a Dict "
                "already (mask_in_observation=True?)"
            )
        self.observation_space = spaces.Dict(
            {"action_mask": spaces.MultiBinary(int(env.action_space.n)), "observation": env.observation_space}
        )

    def observation(self, observation):
        return {"observation": observation, "action_mask": self._masks().astype(np.int8)}

    def action_masks(self) -> np.ndarray:
        """The wrapped env's ``action_masks()`` (bool)."""
        return self._masks()
