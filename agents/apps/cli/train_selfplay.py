"""Train MaskablePPO by self-play on multiplayer Jamb (agents/training/selfplay.py).

    jamb-train-selfplay --ruleset standard --players 2 --reward win
        [--scoring separate] [--total-timesteps N] [--n-envs 64] [--n-steps 64] [--snapshot-freq 50000]
        [--eval-freq 50000] [--eval-games 50] [--baselines random greedy] [--seed 0]
        [--run-dir runs/selfplay_standard] [--resume] [--init-from MODEL.zip] [--algo KEY=VALUE ...]

The learner plays a random seat against opponents drawn every game from a pool: its own
past snapshots (with probability --self-play once one exists) and the baselines.
TensorBoard (``tensorboard --logdir runs``): ``selfplay/win_rate_vs_<baseline>`` and
``selfplay/margin_vs_<baseline>`` on the validation seeds, and SB3's training curves.

The run's settings are saved in ``<run-dir>/selfplay.json``. ``--resume --run-dir DIR``
continues a run from its newest valid checkpoint with those settings: a different
--ruleset, --players, --scoring, --reward, --seed, --baselines, --self-play, --n-envs or
--n-steps is refused; --total-timesteps, --snapshot-freq and --eval-* may change, and a
--total-timesteps at or below the checkpoint's steps (nothing to train) is an error that
writes nothing. A run stopped before its first checkpoint starts again from step 0 in its
folder, with its saved settings. The baselines are loaded before the run folder is made: one that cannot
play the ruleset leaves nothing behind.
``--init-from MODEL.zip`` (a new run) starts the learner from a model's weights: a
solitaire model of the ruleset plays its seat exactly as it plays alone (its observation
leads the seat's; the extra inputs start at weight 0), a self-play model of the same
table as it played there. ``--algo KEY=VALUE`` sets a PPO setting as a config's ``algo:``
key does (learning_rate, clip_range, gamma, gae_lambda, n_epochs, batch_size, ent_coef,
vf_coef, max_grad_norm, target_kl; default: the tuned solitaire settings).
Ctrl-C (or SIGTERM) saves a checkpoint and the final model, then exits with 130 (143).
Bad arguments exit with status 2 and a message. One process writes a run folder at a
time: a second run there (or a --resume of a run still training) exits with status 2
naming the first one's pid. Model files (--init-from, a baseline given as a path, the
run's own checkpoints) are read as data: one holding pickled code, which SB3 would run, is
refused unless --trust-model.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from agents.apps.cli import add_trust_model, add_version, check_seed_option, interruptible, path_arg, untrusted_model
from agents.training import config
from agents.training.config import ConfigError
from jamb_env import RulesetError
from jamb_env.rules import load_ruleset
from jamb_env.rules import match as M
from jamb_env.utils.files import check_output_folder

#: The run's settings (saved in selfplay.json; a resumed run keeps them) and their defaults.
SETTING_DEFAULTS = {
    "ruleset": "standard",
    "players": 2,
    "scoring": "separate",
    "reward": "win",
    "seed": 0,
    "baselines": ["random", "greedy"],
    "self_play": 0.8,
    "n_envs": 64,
    "n_steps": 64,
}
#: Upper bounds of the sizes (agents/training/config.py): more would exhaust the memory long before training.
MAX_N_ENVS = config.MAX_N_ENVS
MAX_EVAL_GAMES = config.MAX_EVAL_GAMES
MAX_ROLLOUT = config.MAX_ROLLOUT  # steps per rollout, n-envs x n-steps (so --n-steps too)
#: The PPO settings --algo may set (a config's ``algo:`` keys).
ALGO_KEYS = (
    "learning_rate",
    "clip_range",
    "gamma",
    "gae_lambda",
    "n_epochs",
    "batch_size",
    "ent_coef",
    "vf_coef",
    "max_grad_norm",
    "target_kl",
)


def algo_settings(parser: argparse.ArgumentParser, items: list[str] | None) -> dict:
    """The ``--algo KEY=VALUE`` items as PPO settings, checked as a config's ``algo:`` keys."""
    import yaml

    algo = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or key not in ALGO_KEYS:
            parser.error(f"--algo {item}: expected KEY=VALUE with KEY one of {', '.join(ALGO_KEYS)}")
        if key in algo:
            parser.error(f"--algo {key} is given twice")
        try:
            algo[key] = yaml.safe_load(text) if text.strip() else None
        except yaml.YAMLError:
            parser.error(f"--algo {item}: the value is not a number")
        if algo[key] is None and key != "target_kl":
            parser.error(f"--algo {item}: give a value")
    try:
        config.check_algo(algo, "--algo")
    except ConfigError as exc:
        parser.error(str(exc))
    return config.algo_kwargs(algo)


def option(key: str) -> str:
    return "--" + key.replace("_", "-")


def check_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Range checks of the options given (None: not given, checked once filled in)."""
    for name in ("total_timesteps", "n_envs", "n_steps", "snapshot_freq", "eval_freq", "eval_games"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"{option(name)} must be at least 1, got {value}")
    for name, most in (("n_envs", MAX_N_ENVS), ("n_steps", MAX_ROLLOUT), ("eval_games", MAX_EVAL_GAMES)):
        value = getattr(args, name)
        if value is not None and value > most:
            parser.error(f"{option(name)} must be in 1..{most:,}, got {value:,}")
    if args.n_envs is not None and args.n_steps is not None and args.n_envs * args.n_steps < 2:
        parser.error(
            f"--n-envs x --n-steps must be at least 2 (PPO normalises the advantages over a rollout), "
            f"got {args.n_envs} x {args.n_steps}"
        )
    if args.n_envs is not None and args.n_steps is not None and args.n_envs * args.n_steps > MAX_ROLLOUT:
        parser.error(
            f"--n-envs x --n-steps must be at most {MAX_ROLLOUT:,} steps per rollout (the rollout buffer holds "
            f"every step), got {args.n_envs:,} x {args.n_steps:,} = {args.n_envs * args.n_steps:,}"
        )
    if args.self_play is not None and not 0.0 <= args.self_play <= 1.0:
        parser.error(f"--self-play must be a probability in 0..1, got {args.self_play}")
    check_seed_option(parser, args.seed)
    if args.baselines is not None:
        from agents.registry import AGENT_NAMES

        unknown = [b for b in args.baselines if b not in AGENT_NAMES]
        if unknown:
            parser.error(f"--baselines: unknown agent(s) {', '.join(unknown)}; known: {', '.join(AGENT_NAMES)}")


def check_resume_dir(parser: argparse.ArgumentParser, run_dir: Path) -> None:
    """``run_dir`` holds a run to resume: an existing folder with a checkpoint, or with the
    settings of a run stopped before its first checkpoint (started again from step 0)."""
    if not run_dir.exists():
        parser.error(f"--resume: no checkpoint in {run_dir} to resume (no such folder)")
    if not run_dir.is_dir():
        parser.error(f"--run-dir {run_dir} is a file, not a folder; --resume takes the run's folder")
    if not os.access(run_dir, os.W_OK | os.X_OK):
        parser.error(f"--run-dir {run_dir}: no permission to write in it")
    from agents.training.runs import checkpoints
    from agents.training.selfplay import SETTINGS_FILE

    if (
        not checkpoints(run_dir) and not (run_dir / SETTINGS_FILE).exists()
    ):  # with its settings: started again from step 0
        hint = "" if not any(run_dir.iterdir()) else f" and no {SETTINGS_FILE} (not a self-play run?)"
        parser.error(f"--resume: no checkpoint in {run_dir} to resume{hint}")


def busy(run_dir: str | Path) -> bool:
    """Whether another process writes a run in ``run_dir`` now (:func:`agents.training.run_lock.check_free`),
    said in one line on stderr: checked before the folder's other checks, which would
    otherwise find a live run's files and suggest --resume."""
    from agents.training.run_lock import RunFolderBusy, check_free

    try:
        check_free(run_dir)
    except RunFolderBusy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return True
    return False


def make_new_run_dir(parser: argparse.ArgumentParser, run_dir: Path) -> None:
    """``run_dir`` can hold a new run: a new or empty folder where files can be written
    (created here)."""
    from agents.training.runs import check_new_run_dir

    try:
        check_new_run_dir(run_dir, empty=True)
    except ConfigError as exc:
        parser.error(str(exc))
    try:
        check_output_folder(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(
            f"--run-dir {run_dir}: cannot create this folder ({exc.strerror})" if exc.strerror else f"--run-dir: {exc}"
        )
    if not os.access(run_dir, os.W_OK | os.X_OK):
        parser.error(f"--run-dir {run_dir}: no permission to write in it")


def build_parser() -> argparse.ArgumentParser:
    """The command line (module docstring); None for a setting not given (the defaults,
    or a resumed run's saved settings, are filled in later)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("--ruleset", help="preset name or rules YAML (default standard)")
    parser.add_argument("--players", type=int, help="players at the table, 2..5 (default 2)")
    parser.add_argument("--scoring", choices=M.SCORING_MODES, help="default separate")
    parser.add_argument("--reward", choices=("score", "win", "margin"), help="default win")
    parser.add_argument("--total-timesteps", type=int, default=1_000_000)
    parser.add_argument("--n-envs", type=int, help=f"games stepped together, 1..{MAX_N_ENVS} (default 64)")
    parser.add_argument(
        "--n-steps",
        type=int,
        help=f"steps per game per rollout (rollout: n-envs x n-steps, 2..{MAX_ROLLOUT:,}; default 64)",
    )
    parser.add_argument("--snapshot-freq", type=int, default=50_000, help="steps between snapshots joining the pool")
    parser.add_argument("--eval-freq", type=int, default=50_000, help="steps between win-rate evaluations")
    parser.add_argument(
        "--eval-games",
        type=int,
        default=50,
        help=f"games per baseline per evaluation, 1..{MAX_EVAL_GAMES} (default 50)",
    )
    parser.add_argument("--self-play", type=float, help="probability that an opponent is a snapshot (default 0.8)")
    parser.add_argument("--baselines", nargs="+", help="baseline opponents (agents.load names; default random greedy)")
    parser.add_argument("--seed", type=int, help="default 0")
    parser.add_argument(
        "--run-dir", type=path_arg, help="default runs/selfplay_<ruleset>_<players>p_<scoring>_<reward>_s<seed>"
    )
    parser.add_argument(
        "--init-from",
        type=path_arg,
        metavar="MODEL",
        help="a new run's learner starts from this model's weights "
        "(a solitaire model of the ruleset, or a self-play model of the same table)",
    )
    parser.add_argument("--algo", nargs="+", metavar="KEY=VALUE", help=f"PPO settings ({', '.join(ALGO_KEYS)})")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --run-dir from its newest checkpoint, with its saved settings",
    )
    add_trust_model(parser)
    return parser


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict | None:
    """The checks of the options together, before any file is read: exits with status 2
    (``parser.error``); returns the ``--algo`` PPO settings, or None after printing why
    ``--init-from``'s model is refused (status 2, nothing written)."""
    check_values(parser, args)
    if args.resume and args.run_dir is None:
        parser.error("--resume needs --run-dir (the run to continue)")
    if args.resume and args.init_from is not None:
        parser.error("--init-from starts a new run; --resume goes on from the run's own checkpoint")
    if args.init_from is not None and not Path(args.init_from).is_file():
        what = "is a folder" if Path(args.init_from).is_dir() else "no such file"
        parser.error(f"--init-from {args.init_from}: {what}; give a model file (.zip)")
    why = untrusted_model([args.init_from] if args.init_from else [], args.trust_model)
    if why is not None:  # before the run folder is made
        print(f"error: --init-from: {' '.join(why.split())}", file=sys.stderr)
        return None
    if args.resume and args.algo:
        parser.error("--algo sets a new run's PPO settings; a resumed run keeps its own")
    return algo_settings(parser, args.algo)


def resumed_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Path, float | None]:
    """``--resume``: the run folder, its saved settings filled into ``args`` (a different
    one given is refused) and its reward scale (None: a run stopped before it saved its
    settings)."""
    from agents.training.selfplay import read_run_settings, setting_differences

    run_dir = Path(args.run_dir)
    check_resume_dir(parser, run_dir)
    try:
        saved = read_run_settings(run_dir)
    except ConfigError as exc:
        parser.error(str(exc))
    if saved is None:
        return run_dir, None
    given = {key: getattr(args, key) for key in SETTING_DEFAULTS if getattr(args, key) is not None}
    different = setting_differences(saved, given, label=option)
    if different:
        parser.error(
            f"--resume continues {run_dir} with its saved settings; these differ: {'; '.join(different)} "
            f"(only --total-timesteps, --snapshot-freq and --eval-* may change)"
        )
    for key in SETTING_DEFAULTS:
        if getattr(args, key) is None:
            setattr(args, key, saved[key])
    return run_dir, saved["reward_scale"]


def check_settings(parser: argparse.ArgumentParser, args: argparse.Namespace, ppo_kwargs: dict) -> list:
    """The settings once filled in (defaults, saved ones): their ranges, the PPO settings,
    the table (ruleset, players, scoring); returns the baselines, loaded before the run
    folder is made (a refused start leaves nothing behind)."""
    for key, default in SETTING_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, default)
    check_values(parser, args)  # saved settings too
    from agents.training.selfplay import load_baselines, ppo_settings

    try:
        ppo_settings(args.n_envs, args.n_steps, ppo_kwargs)
    except ValueError as exc:
        parser.error(f"--algo: {exc}")
    try:
        M.check_match(load_ruleset(args.ruleset), args.players, args.scoring)
    except (RulesetError, ValueError, OSError) as exc:
        if isinstance(exc, OSError):
            what = "is a folder" if Path(args.ruleset).is_dir() else str(exc)
            parser.error(f"--ruleset {args.ruleset}: {what}; give a preset name or a rules YAML file")
        parser.error(str(exc))
    try:
        return load_baselines(args.baselines, args.ruleset, args.trust_model)
    except ConfigError as exc:
        parser.error(f"--baselines: {exc}")


def train_run(args: argparse.Namespace, run_dir: Path, reward_scale: float, baseline_agents: list, ppo_kwargs) -> int:
    """Train (:func:`agents.training.selfplay.train_selfplay`) and say how it ended: the
    final model, an error (status 2) or what an interruption saved (130 / 143)."""
    from agents.training.selfplay import SelfPlaySettings, train_selfplay
    from agents.training.train import TrainingInterrupted

    settings = SelfPlaySettings(args.ruleset, args.players, args.scoring, args.reward, reward_scale)
    start = time.time()
    try:
        model = train_selfplay(
            settings,
            run_dir,
            args.total_timesteps,
            n_envs=args.n_envs,
            n_steps=args.n_steps,
            baselines=tuple(args.baselines),
            self_play=args.self_play,
            snapshot_freq=args.snapshot_freq,
            eval_freq=args.eval_freq,
            eval_games=args.eval_games,
            seed=args.seed,
            resume=args.resume,
            baseline_agents=baseline_agents,
            init_from=args.init_from,
            ppo_kwargs=ppo_kwargs,
            trusted=args.trust_model,
        )
    except (ConfigError, OSError, ValueError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)  # one line (a space's repr spans several)
        return 2
    except TrainingInterrupted as exc:  # SIGINT / SIGTERM: what was saved, and how to go on
        if exc.final_model is not None:
            print(
                f"\ninterrupted by {exc.signal_name} at step {exc.step}: saved checkpoint {exc.checkpoint} and final "
                f"model {exc.final_model}; "
                f"continue with --resume --run-dir {run_dir}",
                file=sys.stderr,
            )
        else:
            print(
                f"\ninterrupted by {exc.signal_name} before anything more was saved; continue with --resume "
                f"--run-dir {run_dir} "
                "(from its newest checkpoint)",
                file=sys.stderr,
            )
        return exc.exit_code
    print(f"{model.num_timesteps} steps in {time.time() - start:.0f} s; final model {run_dir / 'final_model.zip'}")
    return 0


def run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    ppo_kwargs = check_options(parser, args)
    if ppo_kwargs is None:
        return 2
    if args.run_dir is not None and busy(args.run_dir):
        return 2
    run_dir, reward_scale = resumed_settings(parser, args) if args.resume else (None, None)
    baseline_agents = check_settings(parser, args, ppo_kwargs)
    if not args.resume:
        run_dir = Path(
            args.run_dir
            or f"runs/selfplay_{Path(args.ruleset).stem}_{args.players}p_{args.scoring}_{args.reward}_s{args.seed}"
        )
        if busy(run_dir):
            return 2
        make_new_run_dir(parser, run_dir)
    if reward_scale is None:
        reward_scale = (
            0.01 if args.reward in ("score", "margin") else 1.0
        )  # points, as the solitaire configs scale them
    return train_run(args, run_dir, reward_scale, baseline_agents, ppo_kwargs)


def main(argv: list[str] | None = None) -> int:
    return interruptible(run, argv, "interrupted: resume with --resume --run-dir (from the newest checkpoint)")


if __name__ == "__main__":
    raise SystemExit(main())
