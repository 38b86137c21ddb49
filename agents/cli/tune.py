"""Optuna search over the main PPO hyper-parameters on a Jamb ruleset: MaskablePPO (SB3), or RLlib PPO with ``--ray``.

    python scripts/tune.py [--config configs/ppo_classic.yaml] [--ruleset classic_down]
        [--trials 8] [--steps 200000] [--seed 0] [--out runs/tune/<ruleset>]

Each trial trains the base config with sampled settings for ``--steps`` env steps and
is scored by the mean true score of its last masked evaluation (the config's fixed
evaluation games). The small default budget (8 trials x 200k steps, about 8 minutes per
trial on 2 CPU cores) is a starting point, not a tuned result. Writes ``trials.csv``,
``best_config.yaml`` (the base config with the best settings, ready for
``scripts/train.py --config``; its ``eval.freq`` is the base config's, although each trial
evaluates at least once within ``--steps``) and one run folder per trial under ``--out``.
``trials.csv`` is rewritten after every trial and both files are written atomically, so
an interrupted search (Ctrl-C: exit status 130) keeps the finished trials and the best
config among them. ``--out`` must be a new or empty folder, or one without trial runs.

With ``--ray`` (the ``ray`` extra: ``make install-ray``) the same search space and objective
run on Ray Tune: Optuna's TPE chooses the settings (``OptunaSearch``), ``--jobs`` trials
train at once on a local Ray (default 2; or on the cluster at ``--address HEAD:6379``), and
``--scheduler asha`` (default; or ``median``, ``none``) stops weak trials at their
evaluations. ``trials.csv`` (the finished trials) and ``best_config.yaml`` are written the
same way; Ray Tune's own records go to ``<out>/ray_tune`` (agents/ray_backend.py).

An RLlib config (``engine: rllib``, configs/rllib_*.yaml) is swept the same way with
``--ray``: each trial trains RLlib PPO (agents/training/rllib_train.py) on the sampled
settings for ``--steps`` env steps and is scored by the mean true score of its last
evaluation (the config's ``eval_games`` games from ``eval_seed``); ``best_config.yaml`` is
then an RLlib config for ``jamb-train --config``. A trial holds 1 + ``num_env_runners``
CPUs of the Ray. Self-play configs (``players``) are not tuned, and without ``--ray`` an
RLlib config is refused (each trial would start its own Ray).

    jamb-tune --ray --config configs/rllib_classic.yaml --trials 8 --steps 200000

Searched (SB3): learning_rate, n_steps, batch_size, n_epochs, gamma, gae_lambda, ent_coef,
network width/depth (net_arch), reward_scale. (RLlib): lr, train_batch_size (the choices up
to ``--steps``), minibatch_size, num_epochs, gamma, lambda, entropy_coeff, network
width/depth (hidden_sizes), reward_scale.
"""

from __future__ import annotations

import argparse
import copy
import csv
import importlib
import io
import os
import sys
from pathlib import Path

import yaml

from agents.cli import interruptible
from agents.training.config import ConfigError, load_config, read_config
from agents.training.rllib_config import is_rllib_config, load_rllib_config
from jamb_env.files import check_output_folder, write_text_file

NETS = {"128x2": [128, 128], "256x2": [256, 256], "256x3": [256, 256, 256]}
#: RLlib train_batch_size choices (env steps per update: SB3's n_steps x 8 envs).
RLLIB_BATCHES = (1024, 2048, 4096)


def sample(trial, base: dict) -> dict:
    """The base config (SB3, or RLlib: ``engine: rllib``) with one trial's sampled settings."""
    return sample_rllib(trial, base) if is_rllib_config(base) else sample_sb3(trial, base)


def sample_sb3(trial, base: dict) -> dict:
    """An SB3 (MaskablePPO) config with one trial's sampled settings."""
    cfg = copy.deepcopy(base)
    algo = cfg["algo"]
    algo["learning_rate"] = trial.suggest_float("learning_rate", 1e-4, 1e-3, log=True)
    algo["n_steps"] = trial.suggest_categorical("n_steps", [128, 256, 512])
    algo["batch_size"] = trial.suggest_categorical("batch_size", [128, 256, 512])
    algo["n_epochs"] = trial.suggest_categorical("n_epochs", [3, 5, 10])
    algo["gamma"] = trial.suggest_categorical("gamma", [0.99, 0.995, 1.0])
    algo["gae_lambda"] = trial.suggest_categorical("gae_lambda", [0.9, 0.95, 0.98])
    algo["ent_coef"] = trial.suggest_float("ent_coef", 1e-4, 3e-2, log=True)
    algo["policy_kwargs"] = {"net_arch": NETS[trial.suggest_categorical("net_arch", list(NETS))]}
    cfg["env"]["reward_scale"] = trial.suggest_categorical("reward_scale", [0.003, 0.01, 0.03])
    return cfg


def sample_rllib(trial, base: dict) -> dict:
    """An RLlib config (:mod:`agents.training.rllib_config`) with one trial's sampled
    settings: the SB3 space in RLlib's terms. The batches bigger than the trial's budget
    (``total_timesteps``, i.e. ``--steps``) are left out, the smallest always kept."""
    cfg = copy.deepcopy(base)
    cfg["lr"] = trial.suggest_float("lr", 1e-4, 1e-3, log=True)
    batches = [b for b in RLLIB_BATCHES if b <= base["total_timesteps"]] or [RLLIB_BATCHES[0]]
    cfg["train_batch_size"] = trial.suggest_categorical("train_batch_size", batches)
    cfg["minibatch_size"] = trial.suggest_categorical("minibatch_size", [128, 256, 512])  # all below the smallest batch
    cfg["num_epochs"] = trial.suggest_categorical("num_epochs", [3, 5, 10])
    cfg["gamma"] = trial.suggest_categorical("gamma", [0.99, 0.995, 1.0])
    cfg["lambda"] = trial.suggest_categorical("lambda", [0.9, 0.95, 0.98])
    cfg["entropy_coeff"] = trial.suggest_float("entropy_coeff", 1e-4, 3e-2, log=True)
    cfg["hidden_sizes"] = list(NETS[trial.suggest_categorical("hidden_sizes", list(NETS))])
    cfg["reward_scale"] = trial.suggest_categorical("reward_scale", [0.003, 0.01, 0.03])
    return cfg


def eval_freq(cfg: dict) -> int:
    """Env steps between a config's evaluations (SB3 or RLlib)."""
    return cfg["eval_freq"] if is_rllib_config(cfg) else cfg["eval"]["freq"]


def reward_scale(cfg: dict) -> float:
    """A config's reward scale (SB3 or RLlib): the evaluation return over it is the true score."""
    return float(cfg["reward_scale"] if is_rllib_config(cfg) else cfg["env"]["reward_scale"])


def trial_cpus(cfg: dict) -> int:
    """CPUs one Ray trial of the config holds: the trainer, and an RLlib config's env runners."""
    return 1 + int(cfg["num_env_runners"]) if is_rllib_config(cfg) else 1


def load_base(path: str, overrides: dict) -> dict:
    """The base config of a search: an RLlib config (``engine: rllib``) or an SB3 one.

    Raises:
        ConfigError, OSError: a missing or invalid file.
    """
    if is_rllib_config(read_config(path)):
        return load_rllib_config(path, overrides)
    return load_config(path, overrides)


def trials_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    keys = list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(buf, fieldnames=keys)
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def interrupted(out: Path, finished: int, save_best) -> int:
    """Ctrl-C: keep the ``finished`` trials (already in ``trials.csv``) and the best of them
    (``save_best()`` writes it and returns its path), say where on stderr; returns 130."""
    kept = f"; {finished} finished trials are in {out / 'trials.csv'}" if finished else "; no trial finished"
    if finished:
        try:
            kept += f", the best of them in {save_best()}"
        except OSError as exc:
            kept += f" (the best config could not be written: {exc})"
    print(f"\ninterrupted{kept}", file=sys.stderr)
    return 130


def write_best(out: Path, params: dict, base: dict, trials: int, steps: int, how: str = "Optuna") -> Path:
    """best_config.yaml: the base config (the user's own eval.freq) with the best trial's settings."""
    best = sample(optuna_module().trial.FixedTrial(params), base)
    best.pop("config_name", None)
    best.pop("total_timesteps", None)
    return write_text_file(out / "best_config.yaml", f"# best of {trials} {how} trials x {steps} steps on {base['ruleset']} (scripts/tune.py)\n"
                           + yaml.safe_dump(best, sort_keys=False))


def run_trial(trial, number: int, trial_base: dict, out: Path, background: bool = False) -> dict:
    """The objective, shared by the local and the Ray search: train ``sample(trial,
    trial_base)`` in ``out/trial_<number>`` (SB3, or RLlib for an RLlib config); return the
    trial's row of trials.csv (``trial``, ``score``: the mean true score of its last
    evaluation, ``wall_s``, the settings). ``trial``: an Optuna trial, or
    ``FixedTrial(params)`` for settings chosen elsewhere. ``background``: training runs in a
    thread other than the main one (a Ray trial), which leaves the signals alone."""
    cfg = sample(trial, trial_base)
    run_dir = out / f"trial_{number:03d}"
    if is_rllib_config(cfg):  # a thread other than the main one leaves the signals alone by itself
        from agents.training.rllib_train import train_rllib

        summary = train_rllib(cfg, run_dir=run_dir, progress=False)
    else:
        train = importlib.import_module("agents.training.train").train  # looked up now: tests replace it
        summary = train(cfg, run_dir=run_dir, progress_bar=False, **({"handle_signals": False} if background else {}))
    score = summary["eval_score"]
    if score is None:
        raise ValueError(f"trial {number} made no evaluation (run folder {run_dir})")
    return {"trial": number, "score": score, "wall_s": round(summary["wall_time_s"]), **trial.params}


def trial_line(row: dict) -> str:
    shown = {k: v for k, v in row.items() if k not in ("trial", "score", "wall_s")}
    return f"trial {row['trial']}: {row['score']:.1f} points ({row['wall_s']} s) {shown}"


def print_results(rows: list[dict], best_trial: int, best_score: float, best_path: Path) -> None:
    """The table of the finished trials, best first, and the best one."""
    print("\n| trial | score | " + " | ".join(k for k in rows[0] if k not in ("trial", "score")) + " |")
    print("|---" * (len(rows[0])) + "|")
    for r in sorted(rows, key=lambda r: -r["score"]):
        print(f"| {r['trial']} | {r['score']:.1f} | " + " | ".join(str(v) for k, v in r.items() if k not in ("trial", "score")) + " |")
    print(f"\nbest: trial {best_trial}, {best_score:.1f} points; config: {best_path}")


def optuna_module():
    import optuna

    return optuna


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/ppo_classic.yaml", help="base training config")
    parser.add_argument("--ruleset", help="override the config's ruleset (preset name or rules YAML path)")
    parser.add_argument("--trials", type=int, default=8, help="Optuna trials (at least 1)")
    parser.add_argument("--steps", type=int, default=200_000, help="env steps per trial (at least 1)")
    parser.add_argument("--seed", type=int, default=0, help="sampler and training seed (0..2**32-1)")
    parser.add_argument("--out", help="output folder, new or without trial runs (default runs/tune/<ruleset>)")
    parser.add_argument("--ray", action="store_true", help="run the search on Ray Tune (OptunaSearch; needs make install-ray)")
    parser.add_argument("--address", help="with --ray: join the Ray cluster at HEAD:6379 (default: $RAY_ADDRESS, else start a local Ray)")
    parser.add_argument("--jobs", type=int, help="with --ray: trials at once, the CPUs of the local Ray (default 2; a cluster uses its own)")
    parser.add_argument("--scheduler", choices=("asha", "median", "none"), help="with --ray: stop weak trials at their evaluations (default asha)")
    args = parser.parse_args(argv)
    if not args.ray:
        for flag in ("address", "jobs", "scheduler"):
            if getattr(args, flag) is not None:
                parser.error(f"--{flag} is for --ray (the local search runs one trial at a time)")
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        parser.error(f"--jobs must be 1..1024, got {args.jobs}")
    if args.trials < 1:
        parser.error(f"--trials must be at least 1, got {args.trials}")
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    if not 0 <= args.seed < 2**32:
        parser.error(f"--seed must be in 0..2**32-1, got {args.seed}")
    if Path(args.config).is_dir():
        parser.error(f"--config {args.config} is a folder; give a training config YAML file")
    try:
        base = load_base(args.config, {"ruleset": args.ruleset, "total_timesteps": args.steps, "seed": args.seed})
    except (ConfigError, OSError, ValueError) as exc:
        parser.error(f"--config: {exc}")
    if is_rllib_config(base):
        if not args.ray:
            parser.error(f"--config {args.config} is an RLlib config (engine: rllib): tune it with --ray (each trial trains on Ray Tune)")
        if base["players"] is not None:
            parser.error(f"--config {args.config}: key 'players': self-play configs cannot be tuned (their evaluation is a "
                         "match against greedy, not a score); leave out players to tune solitaire training")
    local_cpus = None if args.address or os.environ.get("RAY_ADDRESS") else args.jobs or 2  # a cluster is checked once joined
    if args.ray and local_cpus is not None and trial_cpus(base) > local_cpus:
        parser.error(f"--jobs {local_cpus}: a trial of {args.config} needs {trial_cpus(base)} CPUs (1 + num_env_runners "
                     f"{trial_cpus(base) - 1}); give --jobs {trial_cpus(base)} or more, or lower num_env_runners")
    from jamb_env import load_ruleset

    try:
        load_ruleset(base["ruleset"])
    except ValueError as exc:
        parser.error(f"--ruleset {args.ruleset}: {exc}" if args.ruleset else f"--config {args.config}: key 'ruleset': {exc}")
    out = Path(args.out or f"runs/tune/{Path(str(base['ruleset'])).stem}")
    try:
        check_output_folder(out)
    except OSError as exc:
        parser.error(f"--out {out}: {exc}")
    if out.is_dir():
        used = sorted(p.name for p in out.glob("trial_*") if (p / "config.yaml").exists() or (p / "checkpoints").exists())
        if used:
            parser.error(f"--out {out} already holds a search ({', '.join(used[:3])}{', ...' if len(used) > 3 else ''}); choose another --out or delete it")
    trial_base = copy.deepcopy(base)
    if is_rllib_config(base):  # at least one evaluation per trial; not written to best_config
        trial_base["eval_freq"] = min(base["eval_freq"], args.steps)
    else:
        trial_base["eval"]["freq"] = min(base["eval"]["freq"], args.steps)
    if args.ray:
        from agents.ray_backend import RayUnavailable, import_ray

        from agents.rllib_agent import RLlibUnavailable, import_rllib

        try:
            import_ray()  # before any folder is made
            if is_rllib_config(base):
                import_rllib()
        except (RayUnavailable, RLlibUnavailable) as exc:
            parser.error(f"--ray: {exc}")
    optuna = optuna_module()

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"error: --out {out}: {exc}", file=sys.stderr)
        return 2
    if args.ray:
        from agents.ray_backend import tune_with_ray

        return tune_with_ray(address=args.address, jobs=args.jobs or 2, scheduler=args.scheduler or "asha", trials=args.trials,
                             steps=args.steps, seed=args.seed, base=base, trial_base=trial_base, out=out)
    rows = []

    def objective(trial) -> float:
        row = run_trial(trial, trial.number, trial_base, out)
        rows.append(row)
        write_text_file(out / "trials.csv", trials_csv(rows))  # after every trial: an interrupted search keeps them
        print(trial_line(row), flush=True)
        return row["score"]

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # a failed trial: our one-line message, not its traceback
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=args.seed))
    try:
        study.optimize(objective, n_trials=args.trials)
    except KeyboardInterrupt:
        return interrupted(out, len(rows), lambda: write_best(out, study.best_params, base, len(rows), args.steps))
    except (ConfigError, OSError, ValueError) as exc:
        print(f"error: {exc}" + (f" ({len(rows)} finished trials are in {out / 'trials.csv'})" if rows else ""), file=sys.stderr)
        return 2
    try:
        best_path = write_best(out, study.best_params, base, len(rows), args.steps)
    except OSError as exc:
        print(f"error: cannot write the best config: {exc} (the trials are in {out / 'trials.csv'})", file=sys.stderr)
        return 2
    print_results(rows, study.best_trial.number, study.best_value, best_path)
    return 0


def main(argv: list[str] | None = None) -> int:
    return interruptible(_main, argv, "interrupted")  # Ctrl-C outside the parts that handle it themselves


if __name__ == "__main__":
    sys.exit(main())
