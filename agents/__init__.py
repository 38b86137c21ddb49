"""Agents that play ``JambEnv`` through one interface: ``act(env, observation, mask)``.

Only the random baseline lives here so far; the greedy, expectimax and exact solvers
and the evaluation harness come with issue 4.
"""

from .base import Agent, play_games
from .random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent", "play_games"]
