"""Learning curves from training run folders to a PNG: score vs steps, baselines as lines.

    jamb-plot runs/classic__ppo_classic__* --out curves.png [--tag eval/score] [--x minutes]

Runs of one ruleset and config (read from each run's ``config.yaml``; else folder names
``<ruleset>__<config>__<seed>__<time>`` up to the seed) are one group: its mean is drawn
with the range over its runs (seeds) shaded. Each ruleset gets its own panel, with the
``eval/baseline_<agent>`` scalars of its runs drawn as horizontal lines. A run started
from another model (``init_from``, fine-tuning) is drawn after that model's steps. ``--x
minutes`` draws the same values against wall-clock minutes since each run's first logged
value (TensorBoard's wall times; a resumed run's pause included) instead of env steps; a
run whose wall times are not finite or go back as its steps go on is an error (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from agents.apps.cli import add_version, interruptible, path_arg
from agents.training.curves import X_AXES, curves_figure, not_finite, read_scalars, run_curve, run_info, save_figure
from jamb_env.render.sheet import printable
from jamb_env.utils.files import check_output_file


class _Refused(Exception):
    """A run folder that cannot be plotted: its message is the one line printed (exit 2)."""


def _warn(text: str) -> None:
    print(printable(f"warning: {text}"), file=sys.stderr)  # names and tags from the files, not typed


def _read_run(run: Path, tag: str, x: str, baselines: dict[str, dict[str, float]]) -> tuple[tuple[str, str], tuple]:
    """One run folder's group key ``(ruleset, config)`` and curve; its baselines go into ``baselines``.

    Raises _Refused (one line) for a missing folder, unreadable events, a missing tag or bad wall times.
    """
    if not run.is_dir():
        hint = " (a pattern that matched nothing?)" if any(ch in run.name for ch in "*?[") else ""
        raise _Refused(f"{run} is not a run folder{' (it is a file)' if run.exists() else hint}")
    try:
        scalars = read_scalars(run)
    except Exception as exc:  # TensorBoard raises assorted errors on damaged event files
        raise _Refused(f"{run}: cannot read its TensorBoard events: {type(exc).__name__}: {exc}") from None
    if tag not in scalars:
        raise _Refused(f"{run} has no scalar {tag!r}; it has {', '.join(sorted(scalars)) or 'none'}")
    ruleset, config, offset = run_info(run)
    bad = not_finite(scalars, tag)
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        _warn(f"{run}: {tag} is not a finite number at step(s) {shown}; left out")
    try:
        curve = run_curve(scalars, tag, offset, x)
    except ValueError as exc:  # wall times of a damaged file or a clock set back (--x minutes)
        raise _Refused(f"{run}: {exc}") from None
    for name_tag, (_, values, _) in scalars.items():
        if name_tag.startswith("eval/baseline_"):
            name, value = name_tag.removeprefix("eval/baseline_"), float(values[-1])
            if abs(baselines[ruleset].get(name, value) - value) > 1e-6:
                _warn(
                    f"{ruleset}: runs were evaluated on different games ({name} {baselines[ruleset][name]:.1f} vs "
                    f"{value:.1f} in {run.name}); the panel shows those of the last run given"
                )
            baselines[ruleset][name] = value
    return (ruleset, config), curve


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("runs", nargs="+", type=path_arg, help="run folders (with TensorBoard event files)")
    parser.add_argument("--tag", default="eval/score", help="scalar to plot (default: eval/score)")
    parser.add_argument(
        "--out", default="curves.png", type=path_arg, help="the figure: a .png, .pdf or .svg file (written atomically)"
    )
    parser.add_argument("--title", default=None)
    parser.add_argument(
        "--x",
        choices=sorted(X_AXES),
        default="steps",
        help="horizontal axis: env steps (default) or wall-clock minutes since each run's start",
    )
    args = parser.parse_args(argv)
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
        try:
            key, curve = _read_run(Path(name), args.tag, args.x, baselines)
        except _Refused as exc:
            print(printable(f"error: {exc}"), file=sys.stderr)  # a name a glob matched: from the folder, not typed
            return 2
        groups[key].append(curve)
    fig = curves_figure(groups, baselines, args.tag, args.title, X_AXES[args.x])
    try:
        save_figure(fig, out)
    except OSError as exc:
        print(f"error: cannot write {out}: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return interruptible(
        _main, argv, "interrupted; nothing written"
    )  # Ctrl-C outside the parts that handle it themselves


if __name__ == "__main__":
    sys.exit(main())
