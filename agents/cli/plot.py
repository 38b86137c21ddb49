"""Learning curves from training run folders to a PNG: score vs steps, baselines as lines.

    python scripts/plot.py runs/classic__ppo_classic__* --out curves.png [--tag eval/score]

Runs of one ruleset and config (read from each run's ``config.yaml``; else folder names
``<ruleset>__<config>__<seed>__<time>`` up to the seed) are one group: its mean is drawn
with the range over its runs (seeds) shaded. Each ruleset gets its own panel, with the
``eval/baseline_<agent>`` scalars of its runs drawn as horizontal lines. A run started
from another model (``init_from``, fine-tuning) is drawn after that model's steps.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from agents.cli import interruptible
from jamb_env.files import atomic_path, check_output_file


def read_scalars(run: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        events = acc.Scalars(tag)
        out[tag] = (np.array([e.step for e in events]), np.array([e.value for e in events]))
    return out


def run_info(run: Path) -> tuple[str, str, int]:
    """``(ruleset, group label, step offset)`` of a run, from its config.yaml (so runs of
    one config with several seeds are one group whatever their folder names), else from
    the folder name ``<ruleset>__<config>__<seed>__<time>``. A run started from a model
    (``init_from``) is its own group, "<config> (from a model)", drawn after the env steps
    behind that model (``init_from.json``, written by the run; for older runs, the model
    file's own step count if it is still there)."""
    saved = run / "config.yaml"
    if saved.is_file():
        import yaml

        try:
            cfg = yaml.safe_load(saved.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError):
            cfg = None
        if not isinstance(cfg, dict) or not cfg.get("config_name"):
            print(f"warning: {saved} is not a readable run config; grouping {run.name} by its folder name", file=sys.stderr)
        else:
            ruleset, label = Path(str(cfg.get("ruleset", "?"))).stem, str(cfg["config_name"])
            if not cfg.get("init_from"):
                return ruleset, label, 0
            return ruleset, f"{label} (from a model)", init_steps(run, cfg["init_from"])
    parts = run.name.split("__")
    return (parts[0], parts[1], 0) if len(parts) >= 4 else ("?", run.name, 0)


def init_steps(run: Path, init_from: str) -> int:
    """Env steps behind the model a run started from (0, with a warning, if unknown)."""
    import json
    import zipfile

    from agents.training.runs import init_record

    steps = init_record(run).get("steps_before")
    if isinstance(steps, int):
        return steps
    try:  # a run from before init_from.json: the model file's own count, if it is still there
        with zipfile.ZipFile(init_from) as zf:
            return int(json.loads(zf.read("data")).get("num_timesteps", 0))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        print(f"warning: {run.name} started from {init_from}, whose step count is unknown here; drawing it from step 0", file=sys.stderr)
        return 0


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run folders (with TensorBoard event files)")
    parser.add_argument("--tag", default="eval/score", help="scalar to plot (default: eval/score)")
    parser.add_argument("--out", default="curves.png", help="the figure: a .png, .pdf or .svg file (written atomically)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[tuple[str, str], list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
    baselines: dict[str, dict[str, float]] = defaultdict(dict)  # ruleset -> name -> points
    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        parser.error(f"--out {out}: give a .png, .pdf or .svg file name")
    try:
        check_output_file(out)
    except OSError as exc:
        parser.error(f"--out: {exc}")
    if not args.tag.strip():
        parser.error("--tag: empty")
    for name in dict.fromkeys(str(Path(r).resolve()) for r in args.runs):  # each folder once
        run = Path(name)
        if not run.is_dir():
            hint = " (a pattern that matched nothing?)" if any(ch in run.name for ch in "*?[") else ""
            print(f"error: {run} is not a run folder{' (it is a file)' if run.exists() else hint}", file=sys.stderr)
            return 2
        try:
            scalars = read_scalars(run)
        except Exception as exc:  # TensorBoard raises assorted errors on damaged event files
            print(f"error: {run}: cannot read its TensorBoard events: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
        if args.tag not in scalars:
            print(f"error: {run} has no scalar {args.tag!r}; it has {', '.join(sorted(scalars)) or 'none'}", file=sys.stderr)
            return 2
        ruleset, config, offset = run_info(run)
        steps, values = scalars[args.tag]
        last = {int(x) + offset: v for x, v in zip(steps, values)}  # a resumed run logs its checkpoint step again: keep the later value
        groups[ruleset, config].append((np.array(sorted(last)), np.array([last[x] for x in sorted(last)])))
        for tag, (_, values) in scalars.items():
            if tag.startswith("eval/baseline_"):
                name, value = tag.removeprefix("eval/baseline_"), float(values[-1])
                if abs(baselines[ruleset].get(name, value) - value) > 1e-6:
                    print(f"warning: {ruleset}: runs were evaluated on different games ({name} {baselines[ruleset][name]:.1f} vs "
                          f"{value:.1f} in {run.name}); the panel shows those of the last run given", file=sys.stderr)
                baselines[ruleset][name] = value
    rulesets = list(dict.fromkeys(r for r, _ in groups))
    fig, axes = plt.subplots(1, len(rulesets), figsize=(8 * len(rulesets) if len(rulesets) < 3 else 6 * len(rulesets), 4.5), squeeze=False)
    for ax, ruleset in zip(axes[0], rulesets):
        for (rs, config), curves in groups.items():
            if rs != ruleset:
                continue
            steps = np.unique(np.concatenate([s for s, _ in curves]))
            ys = np.array([np.interp(steps, s, v) for s, v in curves])
            line = ax.plot(steps, ys.mean(axis=0), label=f"{config} ({len(curves)} run{'s' if len(curves) > 1 else ''})")[0]
            if len(curves) > 1:
                ax.fill_between(steps, ys.min(axis=0), ys.max(axis=0), color=line.get_color(), alpha=0.2)
        for k, (name, value) in enumerate(sorted(baselines[ruleset].items(), key=lambda x: x[1])):
            ax.axhline(value, linestyle="--", linewidth=1, color="0.5" if k % 2 else "0.2", dashes=(2 + 2 * k, 2), label=f"{name.replace('_expected', ' (exact)')}: {value:.1f}")
        ax.set_xlabel("environment steps")
        ax.set_ylabel(f"{args.tag} (points)")
        ax.set_title(f"{ruleset}" if len(rulesets) > 1 or not args.title else args.title)
        ax.legend(fontsize=8, loc="lower right")
    if args.title and len(rulesets) > 1:
        fig.suptitle(args.title)
    elif not args.title and len(rulesets) == 1:
        axes[0][0].set_title(f"Jamb {rulesets[0]}: {args.tag}")
    fig.tight_layout()
    try:
        with atomic_path(out) as tmp:  # a failed write leaves the previous plot intact
            fig.savefig(tmp, dpi=120, format=out.suffix.lower().lstrip("."))
    except OSError as exc:
        print(f"error: cannot write {out}: {exc}", file=sys.stderr)
        return 2
    finally:
        plt.close(fig)
    print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return interruptible(_main, argv, "interrupted; nothing written")  # Ctrl-C outside the parts that handle it themselves


if __name__ == "__main__":
    sys.exit(main())
