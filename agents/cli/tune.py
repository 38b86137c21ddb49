"""Optuna search over the main MaskablePPO hyper-parameters on a Jamb ruleset.

    python scripts/tune.py [--config configs/ppo_classic.yaml] [--ruleset classic_down]
        [--trials 8] [--steps 200000] [--seed 0] [--out runs/tune/<ruleset>]

Each trial trains the base config with sampled settings for ``--steps`` env steps and
is scored by the mean true score of its last masked evaluation (the config's fixed
evaluation games). The small default budget (8 trials x 200k steps, about 8 minutes per
trial on 2 CPU cores) is a starting point, not a tuned result. Writes ``trials.csv``,
``best_config.yaml`` (the base config with the best settings, ready for
``scripts/train.py --config``) and one run folder per trial under ``--out``.

Searched: learning_rate, n_steps, batch_size, n_epochs, gamma, gae_lambda, ent_coef,
network width/depth, reward_scale.
"""

from __future__ import annotations

import argparse
import copy
import csv
import sys
from pathlib import Path

import yaml

from agents.training.config import ConfigError, load_config

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/ppo_classic.yaml", help="base training config")
    parser.add_argument("--ruleset", help="override the config's ruleset")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200_000, help="env steps per trial")
    parser.add_argument("--seed", type=int, default=0, help="sampler and training seed")
    parser.add_argument("--out", help="output folder (default runs/tune/<ruleset>)")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.steps < 1:
        parser.error("--trials and --steps must be positive")
    import optuna

    from agents.training.train import train

    try:
        base = load_config(args.config, {"ruleset": args.ruleset, "total_timesteps": args.steps, "seed": args.seed})
    except (ConfigError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base["eval"]["freq"] = min(base["eval"]["freq"], args.steps)  # at least one evaluation per trial
    out = Path(args.out or f"runs/tune/{Path(str(base['ruleset'])).stem}")
    out.mkdir(parents=True, exist_ok=True)
    rows = []

    def objective(trial) -> float:
        cfg = sample(trial, base)
        summary = train(cfg, run_dir=out / f"trial_{trial.number:03d}", progress_bar=False)
        score = summary["eval_score"]
        rows.append({"trial": trial.number, "score": score, "wall_s": round(summary["wall_time_s"]), **trial.params})
        print(f"trial {trial.number}: {score:.1f} points ({summary['wall_time_s']:.0f} s) {trial.params}", flush=True)
        return score

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=args.seed))
    try:
        study.optimize(objective, n_trials=args.trials)
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with open(out / "trials.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    best = sample(optuna.trial.FixedTrial(study.best_params), base)
    best.pop("config_name", None)
    best.pop("total_timesteps", None)
    (out / "best_config.yaml").write_text(
        f"# best of {len(rows)} Optuna trials x {args.steps} steps on {base['ruleset']} (scripts/tune.py)\n"
        + yaml.safe_dump(best, sort_keys=False)
    )
    print("\n| trial | score | " + " | ".join(k for k in rows[0] if k not in ("trial", "score")) + " |")
    print("|---" * (len(rows[0])) + "|")
    for r in sorted(rows, key=lambda r: -r["score"]):
        print(f"| {r['trial']} | {r['score']:.1f} | " + " | ".join(str(v) for k, v in r.items() if k not in ("trial", "score")) + " |")
    print(f"\nbest: trial {study.best_trial.number}, {study.best_value:.1f} points; config: {out / 'best_config.yaml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
