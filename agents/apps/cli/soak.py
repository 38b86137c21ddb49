"""Soak run: the invariant suite of tests/ over millions of random legal games.

    jamb-soak [--games-per-preset 200000] [--num-envs 4096] [--presets ...] [--seed 0]

Plays uniformly random legal games of every playable preset on ``JambVecEnv`` (which the
tests prove step-identical to ``JambEnv``) and checks, for every step and game: no game
without a legal action before its end (RULES.md §4), the return equals the final sheet
score, the score equals upper + bonus + difference + lower and the sum of the column
scores, the game ends exactly when every cell is written (terminal progress feature = 1),
and every observation lies inside the observation space. Prints one Markdown row per
preset and exits 1 on the first violation (2 on bad arguments, 130 on Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys

from agents.apps.cli import add_version, check_seed_option
from jamb_env import list_rulesets, load_ruleset
from jamb_env.testing.invariants import soak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("--games-per-preset", type=int, default=200_000, help="random games per preset (at least 1)")
    parser.add_argument("--num-envs", type=int, default=4096, help="games played side by side (1..1,000,000)")
    parser.add_argument(
        "--presets", nargs="+", default=None, help="preset names or rules YAML paths (default: every preset that loads)"
    )
    parser.add_argument("--seed", type=int, default=0, help="dice and action seed (0..2**32-1)")
    args = parser.parse_args(argv)
    if args.games_per_preset < 1:
        parser.error(f"--games-per-preset must be at least 1, got {args.games_per_preset}")
    if not 1 <= args.num_envs <= 1_000_000:
        parser.error(f"--num-envs must be 1..1,000,000, got {args.num_envs}")
    check_seed_option(parser, args.seed)
    presets = list(dict.fromkeys(args.presets or []))
    for name in presets:  # every named preset must load: an error now, not after hours of soaking
        try:
            load_ruleset(name)
        except (ValueError, OSError) as exc:  # RulesetError, and a rules YAML path that does not exist
            parser.error(f"--presets {name}: {exc}")
    if not presets:
        presets = list_rulesets()
        for name in sorted(set(list_rulesets(playable=False)) - set(presets)):
            print(f"skipping {name}: it does not load (see its error)", file=sys.stderr)
    print("| preset | random games | env steps | seconds | mean score | min | max | violations |")
    print("|---|---|---|---|---|---|---|---|")
    total = 0
    for preset in presets:
        try:
            row = soak(preset, args.games_per_preset, args.num_envs, args.seed)
        except AssertionError as exc:
            print(f"| {preset} | | | | | | | **{exc}** |")
            return 1
        except KeyboardInterrupt:
            print(f"\ninterrupted during {preset}; {total:,} games of the presets above passed", file=sys.stderr)
            return 130
        except MemoryError:
            print(f"error: not enough memory for --num-envs {args.num_envs}; try fewer", file=sys.stderr)
            return 2
        total += row["games"]
        print(
            f"| {preset} | {row['games']:,} | {row['steps']:,} | {row['seconds']:.0f} | {row['mean']:.1f} | "
            f"{row['min']} | {row['max']} | 0 |",
            flush=True,
        )
    print(f"\n{total:,} games, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
