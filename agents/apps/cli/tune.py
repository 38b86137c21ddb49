"""Optuna search over the main PPO hyper-parameters on a Jamb ruleset: MaskablePPO (SB3), or RLlib PPO with ``--ray``.

    jamb-tune [--config my_config.yaml] [--ruleset classic_down]
        [--trials 8] [--steps 200000] [--seed 0] [--out runs/tune/<ruleset>]

Each trial trains the base config with sampled settings for ``--steps`` env steps and
is scored by the mean true score of its last masked evaluation (the config's fixed
evaluation games). The small default budget (8 trials x 200k steps, about 8 minutes per
trial on 2 CPU cores) is a starting point, not a tuned result. Writes ``trials.csv``,
``best_config.yaml`` (the base config with the best settings, ready for
``jamb-train --config``; its ``eval.freq`` is the base config's, although each trial
evaluates at least once within ``--steps``) and one run folder per trial under ``--out``.
``trials.csv`` is rewritten after every trial and both files are written atomically, so
an interrupted search (Ctrl-C: exit status 130) keeps the finished trials and the best
config among them. ``--out`` must be a new or empty folder, or one without a search's
trial runs, ``trials.csv`` or ``best_config.yaml`` (a new search would replace them); one
search writes an ``--out`` at a time (a second exits with status 2 naming the first one's
pid), and each trial holds its own run folder. A base config's ``init_from`` model is read
as data: one holding pickled code is refused unless ``--trust-model``.

With ``--ray`` (the ``ray`` extra: ``pip install "jamb-env[ray]"``) the same search space and objective
run on Ray Tune: Optuna's TPE chooses the settings (``OptunaSearch``), ``--jobs`` trials
train at once on a local Ray (default 2; or on the cluster at ``--address HEAD:6379``), and
``--scheduler asha`` (default; or ``median``, ``none``) stops weak trials at their
evaluations. ``trials.csv`` (the finished trials) and ``best_config.yaml`` are written the
same way; Ray Tune's own records go to ``<out>/ray_tune`` (agents/training/tuning.py).

An RLlib config (``engine: rllib``: the package's default ``rllib_classic.yaml``, examples
in the repository's configs/rllib_*.yaml) is swept the same way with
``--ray``: each trial trains RLlib PPO (agents/training/rllib_train.py) on the sampled
settings for ``--steps`` env steps and is scored by the mean true score of its last
evaluation (the config's ``eval_games`` games from ``eval_seed``); ``best_config.yaml`` is
then an RLlib config for ``jamb-train --config``. A trial holds 1 + ``num_env_runners``
CPUs of the Ray. Self-play configs (``players``) are not tuned, and without ``--ray`` an
RLlib config is refused (each trial would start its own Ray).

    jamb-tune --ray --config my_rllib_config.yaml --trials 8 --steps 200000

Searched (SB3): learning_rate, n_steps, batch_size, n_epochs, gamma, gae_lambda, ent_coef,
network width/depth (net_arch), reward_scale. (RLlib): lr, train_batch_size (the choices up
to ``--steps``), minibatch_size, num_epochs, gamma, lambda, entropy_coeff, network
width/depth (hidden_sizes), reward_scale.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from agents.apps.cli import add_trust_model, add_version, check_seed_option, interruptible, path_arg
from agents.training.config import DEFAULT_CONFIG, MAX_PROCESSES, ConfigError
from agents.training.rllib_config import is_rllib_config
from agents.training.runs import refuse_links
from agents.training.tuning import (
    load_base,
    optuna_module,
    search_local,
    search_with_ray,
    trial_config,
    trial_cpus,
    used_search_files,
    used_trial_runs,
)
from jamb_env.render.sheet import printable
from jamb_env.utils.files import check_output_folder


def build_parser() -> argparse.ArgumentParser:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument(
        "--config",
        type=path_arg,
        default=str(DEFAULT_CONFIG),
        help="base training config (default: the package's ppo_classic.yaml, from any folder; "
        "examples to copy in the repository's configs/)",
    )
    parser.add_argument("--ruleset", help="override the config's ruleset (preset name or rules YAML path)")
    parser.add_argument("--trials", type=int, default=8, help="Optuna trials (at least 1)")
    parser.add_argument("--steps", type=int, default=200_000, help="env steps per trial (at least 1)")
    parser.add_argument("--seed", type=int, default=0, help="sampler and training seed (0..2**32-1)")
    parser.add_argument(
        "--out",
        type=path_arg,
        help="output folder, new or without an earlier search (trial runs, trials.csv, best_config.yaml; default "
        "runs/tune/<ruleset>)",
    )
    parser.add_argument(
        "--ray", action="store_true", help="run the search on Ray Tune (OptunaSearch; needs the ray extra)"
    )
    parser.add_argument(
        "--address",
        help="with --ray: join the Ray cluster at HEAD:6379 (default: $RAY_ADDRESS, else start a local Ray)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        help="with --ray: trials at once, the CPUs of the local Ray (default 2; a cluster uses its own)",
    )
    parser.add_argument(
        "--scheduler",
        choices=("asha", "median", "none"),
        help="with --ray: stop weak trials at their evaluations (default asha)",
    )
    add_trust_model(parser)
    return parser


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The options' own checks, before any file is read (``parser.error``: status 2)."""
    if not args.ray:
        for flag in ("address", "jobs", "scheduler"):
            if getattr(args, flag) is not None:
                parser.error(f"--{flag} is for --ray (the local search runs one trial at a time)")
    if args.jobs is not None and not 1 <= args.jobs <= MAX_PROCESSES:
        parser.error(f"--jobs must be 1..{MAX_PROCESSES}, got {args.jobs}")
    if args.trials < 1:
        parser.error(f"--trials must be at least 1, got {args.trials}")
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    check_seed_option(parser, args.seed)
    if Path(args.config).is_dir():
        parser.error(f"--config {args.config} is a folder; give a training config YAML file")


def load_checked_base(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict:
    """The base config with ``--ruleset``, ``--steps`` and ``--seed``; refused (status 2):
    an RLlib config without ``--ray`` or with ``players``, a trial needing more CPUs than
    the local Ray's, a ruleset that does not load."""
    try:
        base = load_base(args.config, {"ruleset": args.ruleset, "total_timesteps": args.steps, "seed": args.seed})
    except (ConfigError, OSError, ValueError) as exc:
        parser.error(f"--config: {exc}")
    if is_rllib_config(base):
        if not args.ray:
            parser.error(
                f"--config {args.config} is an RLlib config (engine: rllib): tune it with --ray (each trial trains "
                "on Ray Tune)"
            )
        if base["players"] is not None:
            parser.error(
                f"--config {args.config}: key 'players': self-play configs cannot be tuned (their evaluation is a "
                "match against greedy, not a score); leave out players to tune solitaire training"
            )
    local_cpus = (
        None if args.address or os.environ.get("RAY_ADDRESS") else args.jobs or 2
    )  # a cluster is checked once joined
    if args.ray and local_cpus is not None and trial_cpus(base) > local_cpus:
        parser.error(
            f"--jobs {local_cpus}: a trial of {args.config} needs {trial_cpus(base)} CPUs (1 + num_env_runners "
            f"{trial_cpus(base) - 1}); give --jobs {trial_cpus(base)} or more, or lower num_env_runners"
        )
    from jamb_env import load_ruleset

    try:
        load_ruleset(base["ruleset"])
    except ValueError as exc:
        parser.error(
            f"--ruleset {args.ruleset}: {exc}" if args.ruleset else f"--config {args.config}: key 'ruleset': {exc}"
        )
    return base


def check_out(parser: argparse.ArgumentParser, args: argparse.Namespace, base: dict) -> Path:
    """The ``--out`` folder (default ``runs/tune/<ruleset>``): writable, without an earlier
    search (status 2 otherwise)."""
    out = Path(args.out or f"runs/tune/{Path(str(base['ruleset'])).stem}")
    try:
        check_output_folder(out)
    except OSError as exc:
        parser.error(f"--out {out}: {exc}")
    used = used_trial_runs(out) + used_search_files(out)  # either would be replaced
    if used:
        names = ", ".join(used[:3]) + (", ..." if len(used) > 3 else "")
        parser.error(printable(f"--out {out} already holds a search ({names}); choose another --out or delete it"))
    try:  # a trial_000 linked to another folder would be trained in there
        if out.is_dir():
            refuse_links(out, "search in")
    except ConfigError as exc:
        parser.error(f"--out: {exc}")
    return out


def check_libraries(parser: argparse.ArgumentParser, args: argparse.Namespace, base: dict) -> None:
    """Ray (and RLlib for an RLlib config) with ``--ray``, and Optuna, imported before the
    output folder is made, as a trial would (status 2 when missing)."""
    if args.ray:
        from agents.evaluation.ray_backend import RayUnavailable, import_ray
        from agents.rllib_agent import RLlibUnavailable, import_rllib

        try:
            import_ray()  # before any folder is made
            if is_rllib_config(base):
                import_rllib()
        except (RayUnavailable, RLlibUnavailable) as exc:
            parser.error(f"--ray: {exc}")
    optuna_module()  # imported before the output folder is made, as a trial would


def run_search(args: argparse.Namespace, base: dict, trial_base: dict, out: Path) -> int:
    """The search (local, or on Ray Tune with ``--ray``), holding ``--out`` to the end;
    its exit status (2: another search writes there, or has since)."""
    from agents.training.run_lock import hold_run_dir

    with contextlib.ExitStack() as held:
        try:  # one search per --out (each trial locks its own run folder too), held to the end
            held.enter_context(hold_run_dir(out))
        except (ValueError, OSError) as exc:  # RunFolderBusy: another search writes there
            print(f"error: --out {out}: {exc}", file=sys.stderr)
            return 2
        used = used_trial_runs(out) + used_search_files(out)  # again, locked: a search may have ended there since
        if used:
            print(printable(f"error: --out {out} already holds a search ({', '.join(used[:3])})"), file=sys.stderr)
            return 2
        search = search_with_ray if args.ray else search_local
        options = (
            {"address": args.address, "jobs": args.jobs or 2, "scheduler": args.scheduler or "asha"} if args.ray else {}
        )
        return search(
            trials=args.trials,
            steps=args.steps,
            seed=args.seed,
            base=base,
            trial_base=trial_base,
            out=out,
            trusted=args.trust_model,
            **options,
        )


def _main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_options(parser, args)
    base = load_checked_base(parser, args)
    out = check_out(parser, args, base)
    trial_base = trial_config(base, args.steps)  # at least one evaluation per trial; not written to best_config
    check_libraries(parser, args, base)
    return run_search(args, base, trial_base, out)


def main(argv: list[str] | None = None) -> int:
    return interruptible(_main, argv, "interrupted")  # Ctrl-C outside the parts that handle it themselves


if __name__ == "__main__":
    sys.exit(main())
