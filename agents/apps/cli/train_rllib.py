"""``jamb-train --engine rllib``: RLlib PPO training from a config (agents/training/rllib_train.py).

    jamb-train --engine rllib [--config my_rllib_config.yaml] [--total-timesteps N]
        [--seed S] [--ruleset NAME] [--run-dir DIR] [--address HEAD:6379]
    jamb-train --resume runs/<run> [--total-timesteps N] [--address HEAD:6379]

Errors in the arguments, the config, the run folder or the Ray connection print one
``error: ...`` line and exit with status 2; Ctrl-C (or SIGTERM) saves a checkpoint after
the current iteration and exits with 130 (143).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def detect_engine(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The engine of a ``jamb-train`` call: ``--engine``, else what the config file
    (``engine: rllib``) or the resumed run folder says, else ``sb3``."""
    from agents.training.config import ConfigError, read_config
    from agents.training.rllib_config import is_rllib_config

    found = None
    try:
        if args.resume:
            if (Path(args.resume) / "rllib_run.json").is_file():
                found = "rllib"
            elif (Path(args.resume) / "config.yaml").is_file():
                found = "rllib" if is_rllib_config(read_config(Path(args.resume) / "config.yaml")) else "sb3"
        elif args.config:
            found = "rllib" if is_rllib_config(read_config(args.config)) else "sb3"
    except (OSError, ConfigError):
        found = None  # the chosen engine reports the bad file
    if args.engine == "sb3" and found == "rllib":
        parser.error(
            f"--engine sb3: {args.resume or args.config} is an RLlib {'run' if args.resume else 'config'} (engine: "
            "rllib); "
            "leave out --engine or give --engine rllib"
        )
    if args.engine == "rllib" and found == "sb3":
        parser.error(
            f"--engine rllib: {args.resume or args.config} is an SB3 {'run' if args.resume else 'config'}; RLlib "
            "configs "
            "say engine: rllib (agents/training/configs/rllib_classic.yaml)"
        )
    return args.engine or found or "sb3"


def run_rllib(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Train (or resume) with RLlib as the parsed ``jamb-train`` arguments say; the exit status."""
    if args.init_from is not None:
        parser.error("--init-from is for the SB3 engine (a MaskablePPO .zip); --engine rllib starts from fresh weights")
    if args.address is not None and not args.address:
        parser.error(
            "--address: give HEAD:PORT of a running Ray cluster (ray start --head), or leave it out for a local Ray"
        )
    from agents.training.config import ConfigError
    from agents.training.rllib_config import DEFAULT_RLLIB_CONFIG, load_rllib_config, resume_rllib_config

    try:
        if args.resume:
            saved = Path(args.resume) / "config.yaml"
            if not saved.is_file():
                raise FileNotFoundError(f"{args.resume} is not a run folder (no config.yaml)")
            cfg = resume_rllib_config(saved, args.total_timesteps)
        else:
            overrides = {"total_timesteps": args.total_timesteps, "seed": args.seed, "ruleset": args.ruleset}
            cfg = load_rllib_config(args.config or DEFAULT_RLLIB_CONFIG, overrides)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from agents.evaluation.ray_backend import RayUnavailable
    from agents.rllib_agent import RLlibUnavailable

    try:
        from agents.training.rllib_train import TrainingStopped, train_rllib

        summary = train_rllib(
            cfg,
            run_dir=args.resume or args.run_dir,
            resume=bool(args.resume),
            address=args.address,
            progress=not args.no_progress,
        )
    except (ConfigError, OSError, ValueError, RayUnavailable, RLlibUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TrainingStopped as exc:
        print(f"\n{exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    print(f"\nrun folder:      {summary['run_dir']}")
    print(
        f"steps:           {summary['timesteps']} ({summary['steps_per_s']:,.0f} steps/s over "
        f"{summary['wall_time_s']:.0f} s)"
    )
    if summary.get("win_rate") is not None:
        print(
            f"vs greedy:       win rate {summary['win_rate']:.3f}, margin {summary['eval_score']:+.1f} points "
            f"({cfg['eval_games']} games x {cfg['players']} seats from seed {cfg['eval_seed']})"
        )
    elif summary["eval_score"] is not None:
        print(
            f"eval score:      {summary['eval_score']:.1f} points (greedy, masked, {cfg['eval_games']} games from "
            f"seed {cfg['eval_seed']})"
        )
    for name, value in summary["baselines"].items():
        print(
            f"{name + ':':16s} {value:.1f} points on the same games"
            if "expected" not in name
            else f"{name}: {value:.4f} points"
        )
    print(f"checkpoint:      {summary['checkpoint']}")
    table = (
        f" --ruleset {cfg['ruleset']} --players {cfg['players']} --scoring {cfg['scoring']}"
        if cfg.get("players")
        else ""
    )
    print(
        f"agent:           rllib:{summary['checkpoint']}   (jamb-evaluate --agents rllib:{summary['run_dir']} "
        f"greedy{table})"
    )
    print(f"TensorBoard:     tensorboard --logdir {summary['run_dir']}")
    return 0
