"""Issue 42: the learning curve of a value-iteration run (``jamb-train-value``), validation mean
and each round's own games against cumulative CPU minutes, from its ``history.csv``, to a PNG.

    python docs/experiments/value_curve.py runs/value_jnn_s0/history.csv docs/curves_value_jnn.png

Results: docs/results.md "Value iteration with exact backups (issue 42)".
"""

import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

JNN_PUBLISHED = 1722.1  # JambNeuralNetwork's own report, on its engine (docs/results.md)
PPO_ON_VALID_200 = 1636.2  # the shipped jnn PPO on the 200 first validation games (issue 42)


def main(history: str, png: str) -> None:
    rows = list(csv.DictReader(open(history, encoding="utf-8")))
    cpu, total = [], 0.0
    for row in rows:
        total += float(row["cpu_s"])
        cpu.append(total / 60)
    fig, ax = plt.subplots(figsize=(7, 4))
    valid = [float(r["valid_mean"]) for r in rows]
    ax.plot(cpu, valid, "o-", label="round k's value, 200 validation games (30,000,000 + g)")
    own = [float(r["mean_score"]) for r in rows]
    ax.plot([0.0] + cpu[:-1], own, "s--", label="round k's games: the value of round k-1, 1,000 fresh games")
    ax.axhline(JNN_PUBLISHED, color="k", ls=":", label="JambNeuralNetwork, published (its engine)")
    ax.axhline(PPO_ON_VALID_200, color="tab:red", ls=":", label="shipped PPO on the same 200 validation games")
    ax.set_xlabel("CPU minutes (2 cores, cumulative)")
    ax.set_ylabel("mean score")
    ax.set_title("Value iteration with exact backups (jamb-train-value, target: backup)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main(*sys.argv[1:3])
