"""Soak run: the invariant suite of tests/ over millions of random legal games.

    python scripts/soak.py [--games-per-preset 200000] [--num-envs 4096] [--presets ...]

Plays uniformly random legal games of every playable preset on ``JambVecEnv`` (which the
tests prove step-identical to ``JambEnv``) and checks, for every step and game: no game
without a legal action before its end (RULES.md §4), the return equals the final sheet
score, the score equals upper + bonus + difference + lower and the sum of the column
scores, the game ends exactly when every cell is written (terminal progress feature = 1),
and every observation lies inside the observation space. Prints one Markdown row per
preset and exits non-zero on the first violation.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from agents.cli.bench import sample_actions
from jamb_env import JambVecEnv, list_rulesets, load_ruleset


def soak(preset: str, games: int, num_envs: int, seed: int = 0) -> dict:
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
            if not (returns[i] == info["score"] == sum(info["column_scores"].values())
                    == parts["upper"] + parts["bonus"] + parts["difference"] + parts["lower"]):
                raise AssertionError(f"{preset}: return {returns[i]} != score {info['score']} / parts {parts}")
            if info["terminal_observation"][progress] != 1.0:
                raise AssertionError(f"{preset}: a game ended before every cell was written")
            scores.append(info["score"])
            returns[i] = 0.0
            done_games += 1
    wall = time.perf_counter() - start
    return {"preset": preset, "games": done_games, "steps": steps, "seconds": wall, "mean": float(np.mean(scores)),
            "min": int(np.min(scores)), "max": int(np.max(scores))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games-per-preset", type=int, default=200_000)
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--presets", nargs="+", default=None, help="default: every preset that loads")
    args = parser.parse_args(argv)
    presets = args.presets or []
    if not presets:
        for name in list_rulesets():
            try:
                load_ruleset(name)
                presets.append(name)
            except ValueError:
                print(f"skipping {name}: it does not load (see its error)", file=sys.stderr)
    print("| preset | random games | env steps | seconds | mean score | min | max | violations |")
    print("|---|---|---|---|---|---|---|---|")
    total = 0
    for preset in presets:
        try:
            row = soak(preset, args.games_per_preset, args.num_envs)
        except AssertionError as exc:
            print(f"| {preset} | | | | | | | **{exc}** |")
            return 1
        total += row["games"]
        print(f"| {preset} | {row['games']:,} | {row['steps']:,} | {row['seconds']:.0f} | {row['mean']:.1f} | {row['min']} | {row['max']} | 0 |", flush=True)
    print(f"\n{total:,} games, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
