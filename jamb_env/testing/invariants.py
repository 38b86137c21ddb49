"""The invariants of the env checked over many random legal games (``jamb-soak``).

For every step and game of uniformly random legal play on ``JambVecEnv`` (which the tests
prove step-identical to ``JambEnv``): no game without a legal action before its end
(RULES.md §4), the return equals the final sheet score, the score equals upper + bonus +
difference + lower and the sum of the column scores, the game ends exactly when every cell
is written (terminal progress feature = 1), and every observation (every 64th step) lies
inside the observation space.
"""

from __future__ import annotations

import time

import numpy as np

from jamb_env.engine.random_play import sample_actions
from jamb_env.vector import JambVecEnv


def soak(preset: str, games: int, num_envs: int, seed: int = 0) -> dict:
    """Play at least ``games`` uniformly random legal games of ``preset`` (a preset name or
    rules YAML path), ``num_envs`` side by side on :class:`~jamb_env.JambVecEnv` seeded with
    ``seed``, checking every step and game (module docstring).

    Returns a dict: ``preset``, ``games`` (played, at least ``games``), ``steps`` (env steps),
    ``seconds`` (wall time), ``mean``, ``min``, ``max`` (final scores).

    Raises:
        AssertionError: the first violated invariant, with the preset's name.
        RulesetError: an unknown preset. MemoryError: ``num_envs`` too large.
    """
    env = JambVecEnv(num_envs, preset, seed=seed)
    obs = env.reset()
    low, high = env.observation_space.low, env.observation_space.high
    progress = env._encoder.segments["progress"].start
    rng = np.random.default_rng(seed)
    returns = np.zeros(num_envs)
    done_games, steps, scores = 0, 0, []
    start = time.perf_counter()
    while done_games < games:
        masks = env.action_masks()
        if not masks.any(axis=1).all():
            raise AssertionError(f"{preset}: a game without a legal action (dead end)")
        if steps % 64 == 0 and ((obs < low) | (obs > high)).any():
            raise AssertionError(f"{preset}: an observation outside the observation space")
        obs, rewards, dones, infos = env.step(sample_actions(rng, masks))
        returns += rewards
        steps += num_envs
        for i in np.flatnonzero(dones):
            info = infos[i]
            if info.get("illegal_action"):
                raise AssertionError(f"{preset}: a sampled action was illegal (mask and step disagree)")
            parts = info["score_parts"]
            if not (
                returns[i]
                == info["score"]
                == sum(info["column_scores"].values())
                == parts["upper"] + parts["bonus"] + parts["difference"] + parts["lower"]
            ):
                raise AssertionError(f"{preset}: return {returns[i]} != score {info['score']} / parts {parts}")
            if info["terminal_observation"][progress] != 1.0:
                raise AssertionError(f"{preset}: a game ended before every cell was written")
            scores.append(info["score"])
            returns[i] = 0.0
            done_games += 1
    wall = time.perf_counter() - start
    return {
        "preset": preset,
        "games": done_games,
        "steps": steps,
        "seconds": wall,
        "mean": float(np.mean(scores)),
        "min": int(np.min(scores)),
        "max": int(np.max(scores)),
    }
