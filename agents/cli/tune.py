"""Optuna search over the main MaskablePPO hyper-parameters on a Jamb ruleset.

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

Searched: learning_rate, n_steps, batch_size, n_epochs, gamma, gae_lambda, ent_coef,
network width/depth, reward_scale.
"""

from __future__ import annotations

import argparse
import copy
import csv
import io
import sys
from pathlib import Path

import yaml

from agents.cli import interruptible
from agents.training.config import ConfigError, load_config
from jamb_env.files import check_output_folder, write_text_file

NETS = {"128x2": [128, 128], "256x2": [256, 256], "256x3": [256, 256, 256]}


def sample(trial, base: dict) -> dict:
    """The base config with one trial's sampled settings."""
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


def trials_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    keys = list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(buf, fieldnames=keys)
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def write_best(out: Path, study, base: dict, rows: list[dict], steps: int) -> Path:
    """best_config.yaml: the base config (the user's own eval.freq) with the best trial's settings."""
    best = sample(optuna_module().trial.FixedTrial(study.best_params), base)
    best.pop("config_name", None)
    best.pop("total_timesteps", None)
    return write_text_file(out / "best_config.yaml", f"# best of {len(rows)} Optuna trials x {steps} steps on {base['ruleset']} (scripts/tune.py)\n"
                           + yaml.safe_dump(best, sort_keys=False))


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
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error(f"--trials must be at least 1, got {args.trials}")
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    if not 0 <= args.seed < 2**32:
        parser.error(f"--seed must be in 0..2**32-1, got {args.seed}")
    if Path(args.config).is_dir():
        parser.error(f"--config {args.config} is a folder; give a training config YAML file")
    try:
        base = load_config(args.config, {"ruleset": args.ruleset, "total_timesteps": args.steps, "seed": args.seed})
    except (ConfigError, OSError, ValueError) as exc:
        parser.error(f"--config: {exc}")
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
    trial_base["eval"]["freq"] = min(base["eval"]["freq"], args.steps)  # at least one evaluation per trial; not written to best_config
    optuna = optuna_module()

    from agents.training.train import train

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"error: --out {out}: {exc}", file=sys.stderr)
        return 2
    rows = []

    def objective(trial) -> float:
        cfg = sample(trial, trial_base)
        summary = train(cfg, run_dir=out / f"trial_{trial.number:03d}", progress_bar=False)
        score = summary["eval_score"]
        if score is None:
            raise ValueError(f"trial {trial.number} made no evaluation (run folder {out / f'trial_{trial.number:03d}'})")
        rows.append({"trial": trial.number, "score": score, "wall_s": round(summary["wall_time_s"]), **trial.params})
        write_text_file(out / "trials.csv", trials_csv(rows))  # after every trial: an interrupted search keeps them
        print(f"trial {trial.number}: {score:.1f} points ({summary['wall_time_s']:.0f} s) {trial.params}", flush=True)
        return score

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # a failed trial: our one-line message, not its traceback
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=args.seed))
    try:
        study.optimize(objective, n_trials=args.trials)
    except KeyboardInterrupt:
        kept = f"; {len(rows)} finished trials are in {out / 'trials.csv'}" if rows else "; no trial finished"
        if rows:
            try:
                kept += f", the best of them in {write_best(out, study, base, rows, args.steps)}"
            except OSError as exc:
                kept += f" (the best config could not be written: {exc})"
        print(f"\ninterrupted{kept}", file=sys.stderr)
        return 130
    except (ConfigError, OSError, ValueError) as exc:
        print(f"error: {exc}" + (f" ({len(rows)} finished trials are in {out / 'trials.csv'})" if rows else ""), file=sys.stderr)
        return 2
    try:
        best_path = write_best(out, study, base, rows, args.steps)
    except OSError as exc:
        print(f"error: cannot write the best config: {exc} (the trials are in {out / 'trials.csv'})", file=sys.stderr)
        return 2
    print("\n| trial | score | " + " | ".join(k for k in rows[0] if k not in ("trial", "score")) + " |")
    print("|---" * (len(rows[0])) + "|")
    for r in sorted(rows, key=lambda r: -r["score"]):
        print(f"| {r['trial']} | {r['score']:.1f} | " + " | ".join(str(v) for k, v in r.items() if k not in ("trial", "score")) + " |")
    print(f"\nbest: trial {study.best_trial.number}, {study.best_value:.1f} points; config: {best_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return interruptible(_main, argv, "interrupted")  # Ctrl-C outside the parts that handle it themselves


if __name__ == "__main__":
    sys.exit(main())
