"""Agents that play ``JambEnv`` through one interface: ``act(env, observation, mask) -> int``.

``env`` gives read access to the game (``env.game``, ``env.ruleset``); ``mask`` is the
bool legal-action mask; the result is a legal action index.

    agents.load("random" | "greedy" | "expectimax" | "optimal" | "columnwise", ruleset=...)
    agents.load("ppo" | "hybrid", ruleset=...)  # the shipped model (hybrid: planner holds)
    agents.load("path/to/model.zip")          # a MaskablePPO checkpoint
"""

from agents.base import Agent
from agents.random_agent import RandomAgent
from agents.registry import AGENT_NAMES, load

__all__ = ["AGENT_NAMES", "Agent", "RandomAgent", "load"]
