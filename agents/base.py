"""The agent interface and a loop that plays seeded games."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from jamb_env import JambEnv


class Agent(Protocol):
    """Returns a legal action index for the env's current state.

    ``observation`` is the env's observation, ``mask`` its bool legal-action mask; the
    env gives read access to the game state (``env.game``, ``env.ruleset``).
    """

    def act(self, env: JambEnv, observation: np.ndarray, mask: np.ndarray) -> int: ...


def play_games(agent: Agent, ruleset: str, seeds: Iterable[int], **env_options) -> list[dict]:
    """Play one game per seed; return per game ``{"seed", "score", "steps", **score_parts}``
    and the per-column and per-row totals of :func:`agents.evaluation.play_game`.

    Every agent given the same seeds sees the same dice streams (the env's rule).
    """
    from .evaluation import play_game

    env = JambEnv(ruleset=ruleset, illegal_action="raise", **env_options)
    return [play_game(agent, env, seed) for seed in seeds]
