"""Train a MaskablePPO agent on Jamb and log learning curves to TensorBoard.

    jamb-train [--config my_config.yaml] [--total-timesteps N]
        [--seed S] [--run-dir DIR] [--ruleset NAME] [--init-from MODEL.zip] [--trust-model]
    jamb-train --resume runs/<run> [--total-timesteps N]
    jamb-train --engine rllib [--config my_rllib_config.yaml] [--address HEAD:6379]

``--engine rllib`` (or a config with ``engine: rllib``) trains RLlib's PPO instead
(agents/training/rllib_train.py; needs the ``ray`` extra: pip install "jamb-env[ray]"); ``--resume``
finds the engine of the run folder by itself.

The run folder (default ``runs/<ruleset>__<config>__<seed>__<time>/``) gets TensorBoard
events, progress.csv, checkpoints, evaluations.npz, best_model.zip, final_model.zip and
config.yaml. Ctrl-C (or SIGTERM) saves a checkpoint and the final model and exits with
130 (143); --resume continues any run, killed or finished (with a larger --total-timesteps), in
its folder; a resume with nothing left to train (its checkpoint has --total-timesteps steps
or more) is an error that writes nothing. One process writes a run folder at a time: a
second jamb-train there (or a --resume of a run still training) exits with status 2 naming
the first one's pid. Without --config the package's default config is used, from any
folder: ppo_classic.yaml (rllib_classic.yaml for --engine rllib), in
agents/training/configs/ of the installed package; the repository's configs/ folder holds
examples to copy (tuned, fine-tuning, lean trainer, other presets). A model file the run
loads (--init-from, a resumed run's checkpoints) is read as data: one holding pickled code,
which SB3 would run, is refused unless --trust-model.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.apps.cli import add_trust_model, add_version, path_arg
from agents.training.config import DEFAULT_CONFIG, DEFAULTS, ConfigError, load_config, resume_config


def build_parser() -> argparse.ArgumentParser:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument(
        "--config",
        type=path_arg,
        help="training config YAML (default: the package's ppo_classic.yaml, from any folder; "
        "examples to copy in the repository's configs/)",
    )
    parser.add_argument("--total-timesteps", type=int, help="override total_timesteps (env steps)")
    parser.add_argument("--seed", type=int, help="override the training seed")
    parser.add_argument("--ruleset", help="override the ruleset (preset name or YAML path)")
    parser.add_argument("--run-dir", type=path_arg, help="write the run here instead of runs/<name>")
    parser.add_argument(
        "--init-from",
        type=path_arg,
        metavar="MODEL",
        help="start from this model's weights (fine-tuning; overrides init_from and turns off the config's imitation "
        "stage)",
    )
    parser.add_argument(
        "--resume",
        type=path_arg,
        metavar="RUN_DIR",
        help="continue a run from its newest usable checkpoint, in its folder (no checkpoint: start it again)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--engine",
        choices=("sb3", "rllib"),
        help="sb3: the PPO trainer on this machine (MaskablePPO, agents/training/lean_ppo.py; default); "
        "rllib: RLlib's PPO (default when the config or the resumed run says engine: rllib)",
    )
    parser.add_argument(
        "--address",
        help="--engine rllib: join the Ray cluster at HEAD:PORT (else a local Ray starts and stops with the run)",
    )
    add_trust_model(parser)
    return parser


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What ``--resume`` cannot change, and an empty ``--init-from`` (status 2)."""
    if args.resume:
        given = [
            f"--{k.replace('_', '-')}"
            for k in ("config", "seed", "ruleset", "init_from", "run_dir")
            if getattr(args, k) is not None
        ]
        if given:
            parser.error(
                f"--resume continues a run with its saved config; {', '.join(given)} cannot change it (only "
                "--total-timesteps can)"
            )


def train_sb3(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The SB3 engine: train (or resume) and report; the exit status (2: a bad config or
    run folder; 130 / 143: interrupted)."""
    try:
        from agents.training.train import TrainingInterrupted, train  # torch and SB3: after the argument checks
    except KeyboardInterrupt:
        print("interrupted before training started", file=sys.stderr)
        return 130

    try:
        if args.resume:
            cfg = resume_config(args.resume, args.total_timesteps)
            summary = train(
                cfg, run_dir=args.resume, progress_bar=not args.no_progress, resume=True, trusted=args.trust_model
            )
        else:
            overrides = {
                "total_timesteps": args.total_timesteps,
                "seed": args.seed,
                "ruleset": args.ruleset,
                "init_from": args.init_from,
            }
            if args.init_from is not None:  # the model given replaces the config's start (its imitation stage, if any)
                overrides["imitation"] = {**DEFAULTS["imitation"], "games": 0}
            cfg = load_config(args.config or DEFAULT_CONFIG, overrides)
            summary = train(cfg, run_dir=args.run_dir, progress_bar=not args.no_progress, trusted=args.trust_model)
    except (ConfigError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TrainingInterrupted as exc:  # SIGINT / SIGTERM: what was saved, and how to go on
        print(f"\n{exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    report(summary, cfg)
    return 0


def report(summary: dict, cfg: dict) -> None:
    """The run's summary, a line each: folder, steps, evaluation score, baselines, models."""
    run_dir = summary["run_dir"]
    eval_score = summary["eval_score"]
    print(f"\nrun folder:      {run_dir}")
    print(f"steps:           {summary['timesteps']} in {summary['wall_time_s']:.0f} s")
    if eval_score is not None:
        print(
            f"eval score:      {eval_score:.1f} points (masked, deterministic, {cfg['eval']['episodes']} seeded games)"
        )
    for name, value in summary["baselines"].items():
        label = name.replace("_expected", " (exact expectation)")
        print(
            f"{label + ':':16s} {value:.1f} points on the same games"
            if "expected" not in name
            else f"{label}: {value:.4f} points"
        )
    if summary["best_model"]:
        print(f"best model:      {summary['best_model']}")
    print(f"final model:     {summary['final_model']}")
    print(f"TensorBoard:     tensorboard --logdir {run_dir}   (all runs: --logdir {Path(run_dir).parent})")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_options(parser, args)
    from agents.apps.cli.train_rllib import detect_engine, run_rllib

    engine = detect_engine(args, parser)
    if engine == "rllib":
        return run_rllib(args, parser)
    if args.address is not None:
        parser.error("--address joins a Ray cluster, for --engine rllib; the SB3 engine trains on this machine")
    return train_sb3(parser, args)


if __name__ == "__main__":
    sys.exit(main())
