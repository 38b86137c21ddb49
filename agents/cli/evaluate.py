"""Compare agents on the same seeded Jamb games, with 95% confidence intervals.

    python scripts/evaluate.py --ruleset classic --agents random greedy expectimax columnwise \
        [runs/*/final_model.zip] --games 2000 --jobs 2 --out results/classic

Every agent plays the canonical evaluation seeds (agents/evaluation.py: 20,000,000 + i),
so differences are paired. Prints Markdown tables (per agent, per column, per row, paired
differences, spread across checkpoints of a glob) and writes ``<out>.csv`` (per agent),
``<out>_games.csv`` (per game) and ``<out>.png`` (score distributions).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from agents.evaluation import (
    EVAL_SEED_BASE,
    eval_seeds,
    group_spread,
    paired_differences,
    run_games,
    summarise,
)


def markdown(results, summaries, pairs, spreads, exact: dict[str, float]) -> str:
    lines = ["| agent | games | mean | std | 95% CI | min | max | bonus rate | exact expectation |", "|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        ex = f"{exact[s.label]:.4f}" if s.label in exact else ""
        lines.append(f"| {s.label} | {s.n} | {s.mean:.1f} | {s.std:.1f} | ± {s.ci95:.1f} | {s.min} | {s.max} | {s.bonus_rate:.3f} | {ex} |")
    cols = [k for k in summaries[0].parts if k.startswith("col_")]
    lines += ["", "| agent | " + " | ".join(c[4:] for c in cols) + " | upper | bonus | difference | lower |", "|---" * (len(cols) + 5) + "|"]
    for s in summaries:
        vals = [s.parts[c] for c in cols] + [s.parts[k] for k in ("upper", "bonus", "difference", "lower")]
        lines.append(f"| {s.label} | " + " | ".join(f"{v:.1f}" for v in vals) + " |")
    rows = [k for k in summaries[0].parts if k.startswith("row_")]
    lines += ["", "| row (sum over columns) | " + " | ".join(s.label for s in summaries) + " |", "|---" * (len(summaries) + 1) + "|"]
    for r in rows:
        lines.append(f"| {r[4:]} | " + " | ".join(f"{s.parts[r]:.1f}" for s in summaries) + " |")
    if pairs:
        lines += ["", "| paired difference | mean | 95% CI |", "|---|---|---|"]
        for a, b, d, ci in pairs:
            lines.append(f"| {a} − {b} | {d:+.1f} | ± {ci:.1f} |")
    if spreads:
        lines += ["", "| checkpoints | models | mean of means | std across models |", "|---|---|---|---|"]
        for group, k, mean, sd in spreads:
            lines.append(f"| {group} | {k} | {mean:.1f} | {sd:.1f} |")
    return "\n".join(lines)


def plot(results, path: Path, ruleset: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 4.5))
    scores = {label: np.array([g["score"] for g in games]) for label, games in results.items()}
    lo = min(s.min() for s in scores.values())
    hi = max(s.max() for s in scores.values())
    bins = np.linspace(lo, hi, 60)
    for label, s in scores.items():
        ax.hist(s, bins=bins, histtype="step", linewidth=1.5, label=f"{short_label(label)} (mean {s.mean():.0f})")
    ax.set_xlabel("final score (points)")
    ax.set_ylabel("games")
    ax.set_title(f"Jamb {ruleset}: score distributions over {len(next(iter(scores.values())))} seeded games")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def short_label(label: str) -> str:
    """A label for the legend: a checkpoint path shortened to its file name (keeping ``hybrid:``)."""
    prefix = "hybrid:" if label.startswith("hybrid:") else ""
    rest = label.removeprefix(prefix)
    return prefix + (Path(rest).name if "/" in rest else rest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default="classic", help="preset name or rules YAML path")
    parser.add_argument("--agents", nargs="+", default=["random", "greedy", "expectimax"], help="names (random, greedy, expectimax, optimal, columnwise, ppo: the shipped models/<ruleset>.zip, hybrid: its cell choices with the exact planner's holds, hybrid:<model.zip>) or MaskablePPO .zip paths; a glob groups several checkpoints")
    parser.add_argument("--games", type=int, default=1000, help="games per agent (canonical seeds)")
    parser.add_argument("--seed-base", type=int, default=EVAL_SEED_BASE, help="first seed (default: the canonical one)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--out", default=None, help="output prefix for .csv, _games.csv and .png (default results/<ruleset>)")
    parser.add_argument("--records", help="write each agent's games as replayable records (JSON lines) into this folder")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be at least 2 (confidence intervals)")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.seed_base < 0 or args.seed_base + args.games > 2**32:
        parser.error("--seed-base must be >= 0 (seeds are seed_base .. seed_base + games - 1 < 2**32)")
    if len(set(args.agents)) != len(args.agents):
        parser.error("an agent is named twice: each agent plays the same games once")
    out = Path(args.out or f"results/{Path(args.ruleset).stem}")
    try:  # fail before playing, not after
        out.parent.mkdir(parents=True, exist_ok=True)
        if args.records:
            Path(args.records).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"error: cannot write the outputs: {exc}", file=sys.stderr)
        return 2
    try:
        results = run_games(args.agents, args.ruleset, eval_seeds(args.games, args.seed_base), jobs=args.jobs,
                            progress=not args.no_progress, record=bool(args.records))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.records:
        folder = Path(args.records)
        folder.mkdir(parents=True, exist_ok=True)
        for label, games in results.items():
            path = folder / (label.replace("/", "_").removesuffix(".zip") + ".jsonl")
            path.unlink(missing_ok=True)
            for g in games:
                g.pop("record").write(path, append=True)
    summaries = summarise(results)
    exact = {}
    for label in results:
        if label in ("optimal", "columnwise"):
            from agents import load

            exact[label] = load(label, ruleset=args.ruleset).expected_score
    text = markdown(results, summaries, paired_differences(results), group_spread(results, args.agents), exact)
    print(text)
    with open(out.with_suffix(".csv"), "w", newline="") as fh:
        keys = ["agent", "games", "mean", "std", "ci95", "min", "max", "bonus_rate", "exact"] + list(summaries[0].parts)
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for s in summaries:
            w.writerow({"agent": s.label, "games": s.n, "mean": s.mean, "std": s.std, "ci95": s.ci95, "min": s.min, "max": s.max, "bonus_rate": s.bonus_rate, "exact": exact.get(s.label, ""), **s.parts})
    with open(out.parent / f"{out.name}_games.csv", "w", newline="") as fh:
        first = next(iter(results.values()))[0]
        w = csv.DictWriter(fh, fieldnames=["agent"] + list(first))
        w.writeheader()
        for label, games in results.items():
            for g in games:
                w.writerow({"agent": label, **g})
    plot(results, out.with_suffix(".png"), args.ruleset)
    print(f"\nwrote {out.with_suffix('.csv')}, {out.parent / (out.name + '_games.csv')}, {out.with_suffix('.png')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
