"""Baseline agents' scores on a training run's evaluation games (``eval/baseline_<agent>``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def eval_games(agent, cfg: Mapping[str, Any]) -> list[int]:
    """True scores of ``agent`` on the training run's evaluation games (points).

    The masked evaluation plays ``eval.n_envs`` envs seeded ``eval.seed + i`` (envs.eval_seeds), each playing
    consecutive games from its generator, split as ``evaluate_policy`` splits them; the
    same games are replayed here on ``JambEnv``s seeded alike (the batched env is
    step-identical), so baselines and the PPO curve see the same dice streams.
    """
    from agents.training.envs import eval_seeds
    from jamb_env import JambEnv

    seeds = eval_seeds(cfg)
    n, episodes = cfg["eval"]["n_envs"], cfg["eval"]["episodes"]
    scores = []
    for i in range(n):
        env = JambEnv(cfg["ruleset"], illegal_action="raise")
        for g in range((episodes + i) // n):
            obs, info = env.reset(seed=seeds[i] if g == 0 else None)
            done = False
            while not done:
                obs, _, done, _, info = env.step(agent.act(env, obs, env.action_masks()))
            scores.append(info["score"])
    return scores


def baseline_scores(cfg: Mapping[str, Any]) -> dict[str, float]:
    """Mean evaluation-game scores of the baselines that can play the ruleset: random,
    greedy, expectimax, and the exact optimum (expected score) where it is computable."""
    from agents import load

    out = {}
    for name in ("random", "greedy", "expectimax"):
        out[name] = float(np.mean(eval_games(load(name, ruleset=cfg["ruleset"]), cfg)))
    for name in ("optimal", "columnwise"):
        try:
            out[f"{name}_expected"] = float(load(name, ruleset=cfg["ruleset"]).expected_score)
        except ValueError:
            pass
    return out
