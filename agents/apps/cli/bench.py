"""Benchmarks: env steps per second under random legal play, and the PPO trainer's throughput.

    jamb-bench [--seconds 5] [--repeats 5] [--presets classic six_dice] [--skip-train]
        [--rllib [--rllib-runners 1 2]] [--skip-env] [--agents expectimax search [--agent-games 5]]
        [--trainers CONFIG (e.g. the repository's configs/ppo_classic_lean.yaml)]
        [--training [--training-nets 256-256 512-512-256] [--training-ruleset jnn] [--training-rounds 2]
        [--training-threads 2] [--training-compile]]

One run, so the ratios are comparable. Env rows time the env calls only (step and the
mask read); the random legal action sampling is timed apart and reported as its own
column; each figure is the median of `--repeats` runs (their range beside it: shared
machines are noisy). Peak memory is the peak traced by ``tracemalloc`` during a short separate run
(Python and NumPy allocations of the env and the loop). Training rows run MaskablePPO on
the default config (``ppo_classic.yaml``, package data) with each vec-env kind and report
steps/s and the share of wall time spent inside the env (step, reset, masks). With
``--rllib`` (needs the ``ray`` extra), RLlib PPO rows on the default ``rllib_classic.yaml``
with 0 (the driver samples), 1 and 2 env runners on a local Ray: the sampling rate (env
steps/s of the env runners with the policy's inference, all runners together) and the
training rate (env steps/s of whole PPO iterations: sampling and updates). With
``--agents``, seconds per game of each agent (``agents.load`` names and paths) on the
first preset, over ``--agent-games`` games of the validation seeds after one warm-up game
(median and range). With ``--trainers CONFIG``, the PPO trainer (:mod:`agents.training.lean_ppo`)
on that training config as ``jamb-train`` builds it, in bf16 where the CPU has bf16 units and in
fp32: train env steps/s over at least ``--train-steps`` after a warm-up rollout, and the share of
the time in the PPO updates. With ``--training``, the lean trainer on
``--training-ruleset`` at issue 43's shapes (1,024 games x 32 steps, 4 epochs of 8 minibatches of
4,096) for each network, in bf16 where the CPU has bf16 units and in fp32, beside a plain fp32
reference loop of the same shapes, alternating rounds in this one process: steps/s (the median
of ``--training-rounds``) and the ratio to the reference (``agents.apps.bench.training_rows``).

In a checkout, also runnable under pytest-benchmark: ``pytest benchmarks/``.
"""

from __future__ import annotations

import argparse
import os
import sys

from agents.apps.bench import agent_rows, env_rows, rllib_rows, train_rows, trainer_rows, training_rows
from agents.apps.cli import add_trust_model, add_version
from agents.training.config import CompileFailed, ConfigError
from jamb_env.engine.doors import MAX_WIDTH, layer_widths


def markdown(
    env_table: list[dict],
    train_table: list[dict],
    rllib_table: list[dict] | None = None,
    agent_table: list[dict] | None = None,
    trainer_table: list[dict] | None = None,
    trainer_config: str = "",
    training_table: list[dict] | None = None,
) -> str:
    lines = (
        [
            "| preset | env | games | env steps/s (median) | range | with sampling | peak MB |",
            "|---|---|---|---|---|---|---|",
        ]
        if env_table
        else []
    )
    for r in env_table:
        lo, hi = r["env_range"]
        lines.append(
            f"| {r['preset']} | {r['env']} | {r['games']} | {r['env_steps_per_s']:,.0f} | {lo:,.0f}-{hi:,.0f} "
            f"| {r['with_sampling_per_s']:,.0f} | {r['peak_mb']:.1f} |"
        )
    if train_table:
        lines += [""] if lines else []
        lines += [
            "| MaskablePPO (agents/training/configs/ppo_classic.yaml) | envs | steps/s | env share of wall time |",
            "|---|---|---|---|",
        ]
        for r in train_table:
            lines.append(
                f"| vec_env: {r['vec_env']} | {r['n_envs']} | {r['steps_per_s']:,.0f} | {100 * r['env_share']:.1f}% |"
            )
    if trainer_table:
        lines += [""] if lines else []
        lines += [
            f"| trainer ({trainer_config}) | envs | steps per rollout | train steps/s | update share of wall time |",
            "|---|---|---|---|---|",
        ]
        for r in trainer_table:
            lines.append(
                f"| {r['trainer']} | {r['n_envs']} | {r['rollout']:,} | {r['steps_per_s']:,.0f} "
                f"| {100 * r['update_share']:.1f}% |"
            )
    if training_table:
        lines += [""] if lines else []
        lines += [
            "| network | loop | precision | train steps/s (median) | range | vs reference |",
            "|---|---|---|---|---|---|",
        ]
        for r in training_table:
            lo, hi = r["range"]
            lines.append(
                f"| {r['net']} | {r['loop']} | {r['precision']} | {r['steps_per_s']:,.0f} | {lo:,.0f}-{hi:,.0f} "
                f"| {r['vs_reference']:.2f} |"
            )
    if rllib_table:
        lines += [""] if lines else []
        lines += [
            "| RLlib PPO (agents/training/configs/rllib_classic.yaml) | games per runner | sampling env steps/s | "
            "training env steps/s |",
            "|---|---|---|---|",
        ]
        for r in rllib_table:
            where = "the driver samples" if r["env_runners"] == 0 else f"{r['env_runners']} env runner(s)"
            lines.append(
                f"| num_env_runners: {r['env_runners']} ({where}) | {r['games']} | {r['sample_per_s']:,.0f} | "
                f"{r['steps_per_s']:,.0f} |"
            )
    if agent_table:
        lines += [""] if lines else []
        lines += ["| agent | ruleset | games | seconds per game (median) | range |", "|---|---|---|---|---|"]
        for r in agent_table:
            lo, hi = r["range"]
            lines.append(
                f"| {r['agent']} | {r['ruleset']} | {r['games']} | {r['s_per_game']:.2f} | {lo:.2f}-{hi:.2f} |"
            )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="seconds per env measurement (more than 0, at most 3600)"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=5,
        help="runs per env measurement, reported as their median "
        "and range (1-100; the --seconds are split between them)",
    )
    parser.add_argument(
        "--presets", nargs="+", default=["classic", "six_dice"], help="preset names or rules YAML paths"
    )
    parser.add_argument(
        "--train-steps", type=int, default=40_960, help="MaskablePPO steps per vec-env kind (at least 1)"
    )
    parser.add_argument("--skip-train", action="store_true", help="no MaskablePPO rows")
    parser.add_argument("--skip-env", action="store_true", help="no env rows")
    parser.add_argument(
        "--rllib", action="store_true", help='RLlib PPO rows too (needs the ray extra: pip install "jamb-env[ray]")'
    )
    parser.add_argument(
        "--rllib-runners", type=int, nargs="+", default=[0, 1, 2], help="env runner counts of the RLlib rows (0-64)"
    )
    parser.add_argument(
        "--agents", nargs="+", default=[], help="time these agents (seconds per game) on the first preset"
    )
    parser.add_argument("--agent-games", type=int, default=5, help="timed games per agent (1-1000)")
    parser.add_argument(
        "--trainers", metavar="CONFIG", help="the PPO trainer on this training config in each precision: train steps/s"
    )
    add_trust_model(parser)
    parser.add_argument(
        "--training", action="store_true", help="the lean trainer (bf16 where supported, fp32) beside a plain fp32 loop"
    )
    parser.add_argument(
        "--training-nets", nargs="+", default=["256-256", "512-512-256"], help="hidden layers of the training rows"
    )
    parser.add_argument("--training-ruleset", default="jnn", help="preset of the training rows")
    parser.add_argument(
        "--training-rounds", type=int, default=2, help="timed rounds per loop of the training rows (1-100)"
    )
    parser.add_argument("--training-threads", type=int, default=2, help="torch threads of the training rows (1-256)")
    parser.add_argument(
        "--training-compile",
        action="store_true",
        help="also the lean trainer with compile: true (torch.compile of the update; compiling takes tens of seconds)",
    )
    return parser


def check_numbers(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[int, ...]]:
    """The options' ranges (``parser.error``: status 2), and RLlib for ``--rllib``; the
    hidden layers of ``--training-nets``."""
    nets = []
    for net in args.training_nets:
        try:
            nets.append(tuple(int(n) for n in net.replace("x", "-").split("-")))
        except ValueError:
            parser.error(f"--training-nets: {net!r} is not hidden layer sizes such as 256-256")
        if not layer_widths(nets[-1]):
            parser.error(f"--training-nets: {net!r}: layer sizes are 1 to {MAX_WIDTH:,}")
    if not 1 <= args.training_rounds <= 100:
        parser.error(f"--training-rounds must be 1 to 100, got {args.training_rounds}")
    if not 1 <= args.training_threads <= 256:
        parser.error(f"--training-threads must be 1 to 256, got {args.training_threads}")
    if not 1 <= args.agent_games <= 1000:
        parser.error(f"--agent-games must be 1 to 1000, got {args.agent_games}")
    if any(not 0 <= n <= 64 for n in args.rllib_runners):
        parser.error(f"--rllib-runners must be 0 to 64, got {args.rllib_runners}")
    if args.rllib:
        try:
            import ray.rllib  # noqa: F401
        except ImportError:
            parser.error('--rllib: RLlib is not installed: make install-ray (or pip install -e ".[ray]")')
    if not 0 < args.seconds <= 3600:  # nan fails too
        parser.error(f"--seconds must be more than 0 and at most 3600, got {args.seconds}")
    if not 1 <= args.repeats <= 100:
        parser.error(f"--repeats must be 1 to 100, got {args.repeats}")
    if args.train_steps < 1:
        parser.error(f"--train-steps must be at least 1, got {args.train_steps}")
    if args.training and args.training_compile:
        from agents.training.config import cxx_compiler

        if cxx_compiler() is None:  # before the benchmark starts (compile: true's own check)
            parser.error(
                "--training-compile: torch.compile needs a C++ compiler (g++, or the one $CXX names) that runs"
            )
    return nets


def check_inputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The presets, the training ruleset, the agents and the trainers' config load
    (status 2 otherwise); the presets, each once."""
    from jamb_env import load_ruleset

    presets = list(dict.fromkeys(args.presets))
    for name in presets:
        try:
            load_ruleset(name)
        except (ValueError, OSError) as exc:  # RulesetError, and a rules YAML path that does not exist
            parser.error(f"--presets {name}: {exc}")
    if args.training:
        try:
            load_ruleset(args.training_ruleset)
        except (ValueError, OSError) as exc:
            parser.error(f"--training-ruleset {args.training_ruleset}: {exc}")
    if args.agents:
        from agents import load

        for spec in args.agents:
            try:
                load(spec, ruleset=presets[0], trusted=args.trust_model)
            except (ValueError, FileNotFoundError) as exc:
                parser.error(f"--agents {spec}: {exc}")
    if args.trainers is not None:
        from agents.training.config import load_config

        try:
            load_ruleset(load_config(args.trainers)["ruleset"])
        except (ValueError, OSError) as exc:  # ConfigError, RulesetError; a file missing or unreadable
            parser.error(f"--trainers {args.trainers}: {exc}")
    return presets


def measure(args: argparse.Namespace, presets: list[str], nets: list[tuple[int, ...]]) -> list[list[dict]] | int:
    """Every table asked for (env, MaskablePPO, RLlib, agents, trainers, training rows),
    or the exit status when a measurement is refused (2) or interrupted (130)."""
    try:
        print(f"# cores: {os.cpu_count()}, numba threads: {__import__('numba').get_num_threads()}", file=sys.stderr)
        env_table = [] if args.skip_env else env_rows(presets, args.seconds, args.repeats)
        train_table = [] if args.skip_train else train_rows(args.train_steps)
        rllib_table = rllib_rows(args.train_steps, args.rllib_runners) if args.rllib else []
        agent_table = agent_rows(args.agents, presets[0], args.agent_games, args.trust_model) if args.agents else []
        trainer_table = trainer_rows(args.train_steps, args.trainers) if args.trainers is not None else []
        training_table = (
            training_rows(
                args.training_ruleset,
                tuple(nets),
                args.training_rounds,
                args.training_threads,
                compiled=args.training_compile,
            )
            if args.training
            else []
        )
        return [env_table, train_table, rllib_table, agent_table, trainer_table, training_table]
    except CompileFailed as exc:  # --training-compile, a C++ compiler that answers but cannot build
        print(f"error: --training-compile: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:  # settings MaskablePPO itself refuses (new_model), found when the trainer rows build it
        print(f"error: --trainers {args.trainers}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; no table", file=sys.stderr)
        return 130


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    nets = check_numbers(parser, args)
    presets = check_inputs(parser, args)
    tables = measure(args, presets, nets)
    if isinstance(tables, int):
        return tables
    env_table, train_table, rllib_table, agent_table, trainer_table, training_table = tables
    print(
        markdown(env_table, train_table, rllib_table, agent_table, trainer_table, args.trainers or "", training_table)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
