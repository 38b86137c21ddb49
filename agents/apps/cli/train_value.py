"""Train an afterstate value network for the ``search`` agent (agents/training/value.py).

    jamb-train-value --config value_classic_down.yaml [--out DIR] [--resume]
    jamb-train-value --ruleset classic --iterations 4 --games 2000 [--seed 0] [--out DIR]
    jamb-train-value --config value_jnn.yaml   (target: backup: value iteration)
    jamb-train-value --error-vs-optimal runs/value_classic_down_s0/value.npz [--games 2000]

Options given on the command line override the config's keys (``ruleset``, ``seed``,
``iterations``, ``games``, ``first_games``, ``target``, ``lam``, ``valid_games``, ``epochs``,
``workers``). The run folder (default
``runs/value_<ruleset name>_s<seed>``) gets ``value_iter<k>.npz`` per iteration, ``value.npz``
(the newest), ``history.csv``, ``config.yaml`` and TensorBoard scalars ``value/*``;
``--resume`` continues a stopped run after its newest finished iteration; a new run needs a
new or empty folder (one holding other files is refused, never written beside). Play the result
with ``--agents search:<run>/value.npz``; the package's ``agents/models/value_<ruleset>.npz`` is
the shipped network of plain ``search``. One process writes a run folder at a time: a
second run there exits with status 2 naming the first one's pid. Bad arguments exit with status 2 and a message; Ctrl-C
exits with 130 and SIGTERM with 143, keeping every finished iteration (a run stopped in its
first iteration resumes from iteration 0).

``--error-vs-optimal FILE`` measures a network of a one-column preset against the exact
solver instead of training: the mean absolute error (and bias) of the search agent's value
of every afterstate visited by optimal play on the canonical games (20,000,000 + g, ``--games``
of them, default 2000), beside that of the prior alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.apps.cli import add_version, path_arg

OVERRIDES = (
    "ruleset",
    "seed",
    "iterations",
    "games",
    "first_games",
    "target",
    "lam",
    "valid_games",
    "epochs",
    "workers",
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jamb-train-value", description=__doc__.split("\n\n")[0])
    add_version(parser)
    parser.add_argument(
        "--config",
        type=path_arg,
        help="YAML file with ValueConfig keys (examples: configs/value_*.yaml in the repository)",
    )
    parser.add_argument("--ruleset", help="preset name (default: the config's, else classic)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--iterations", type=int, help="policy-iteration rounds (round 0 plays expectimax)")
    parser.add_argument("--games", type=int, help="games per round")
    parser.add_argument("--first-games", type=int, help="games of round 0 (expectimax's; default --games)")
    parser.add_argument(
        "--target",
        choices=("return", "backup"),
        help="return: lambda-returns of the points (policy iteration); "
        "backup: exact one-turn backups (value iteration)",
    )
    parser.add_argument("--lam", type=float, help="lambda of the targets, 0..1 (1: Monte Carlo)")
    parser.add_argument("--valid-games", type=int, help="validation games each round's network plays (the curve)")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--workers", type=int, help="processes playing the games (default 2)")
    parser.add_argument("--out", type=path_arg, help="run folder (default runs/value_<ruleset name>_s<seed>)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out after its newest iteration")
    parser.add_argument(
        "--error-vs-optimal",
        type=path_arg,
        metavar="FILE",
        help="measure this network against the exact solver instead of training",
    )
    return parser


def _config(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """The ValueConfig of the command line: --config's mapping, then the options given (exit 2 on a bad one)."""
    from agents.training.value import ValueConfig

    raw: dict = {}
    if args.config:
        from agents.training.config import ConfigError
        from jamb_env.rules.ruleset import read_yaml_mapping

        try:
            raw = read_yaml_mapping(Path(args.config), ConfigError, empty_ok=True)
        except ConfigError as exc:  # names the file: too large, not UTF-8, not YAML, not a mapping
            parser.error(f"--config: {exc}")
        except OSError as exc:
            parser.error(f"--config {args.config}: {exc.strerror or exc}")
    for key in OVERRIDES:
        if getattr(args, key) is not None:
            raw[key] = getattr(args, key)
    try:
        return ValueConfig.from_dict(raw), set(raw)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))


def _main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.error_vs_optimal is not None:
        unused = [
            f"--{k.replace('_', '-')}"
            for k in (*OVERRIDES, "config", "out")
            if k not in ("ruleset", "games") and getattr(args, k) is not None
        ] + (["--resume"] if args.resume else [])
        if unused:
            parser.error(f"--error-vs-optimal measures a network and trains nothing: {', '.join(unused)} do not apply")
        return error_vs_optimal(parser, args)
    from agents.training.value import default_run_dir, resumed_config, train_value

    cfg, given = _config(parser, args)
    out = Path(args.out) if args.out else default_run_dir(cfg)
    if args.resume:  # the run's own settings, not the defaults, but for how far and how fast
        try:
            cfg = resumed_config(cfg, given, out)
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
    from agents.training.run_lock import RunFolderBusy

    try:
        path = train_value(cfg, out, resume=args.resume)
    except RunFolderBusy as exc:  # another process writes there: one line, as every trainer
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except FileExistsError as exc:
        parser.error(str(exc))
    except OSError as exc:  # a file in the way, no permission
        parser.error(f"--out {out}: {exc}")
    except ValueError as exc:  # a damaged or different run to resume
        parser.error(str(exc))
    print(
        f"value network: {path}\nplay it:       jamb-evaluate --ruleset {cfg.ruleset} --agents expectimax search:{path}"
    )
    return 0


def error_vs_optimal(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from agents.evaluation.solitaire import eval_seeds
    from agents.evaluation.value_error import value_error_vs_optimal
    from agents.search import ValueNet

    games = 2000 if args.games is None else args.games
    if games < 1:
        parser.error(f"--games must be at least 1, got {games}")
    try:
        net = ValueNet.load(args.error_vs_optimal)
        if args.ruleset not in (None, net.ruleset):
            parser.error(f"--ruleset {args.ruleset}: the network is for {net.ruleset}")
        err = value_error_vs_optimal(net, net.ruleset, eval_seeds(games))
    except (FileNotFoundError, ValueError) as exc:
        parser.error(f"--error-vs-optimal: {exc}")
    print(
        f"{net.ruleset}, {games} canonical games, {err['states']:,} afterstates of optimal play: "
        f"value MAE {err['mae']:.3f} points (bias {err['bias']:+.3f}); prior alone MAE {err['prior_mae']:.3f}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C exits with 130, SIGTERM with 143 (the games' worker processes killed), the
    finished iterations kept."""
    from agents.apps.cli.evaluate import Terminated, sigterm_interrupts

    with sigterm_interrupts():
        try:
            return _main(argv)
        except KeyboardInterrupt as exc:
            terminated = isinstance(exc, Terminated)
            print(
                f"\n{'terminated (SIGTERM)' if terminated else 'interrupted'}: the finished iterations are kept; "
                "continue with --resume",
                file=sys.stderr,
            )
            return 143 if terminated else 130


if __name__ == "__main__":
    sys.exit(main())
