"""Learning curves of training runs (``jamb-plot``): the TensorBoard scalars of run folders,
how runs group (ruleset, config) and where a fine-tuned run starts, and the figure."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from jamb_env.render.sheet import printable
from jamb_env.utils.files import atomic_path


def read_scalars(run: Path) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every scalar of a run folder's TensorBoard event files: tag -> (steps int64 (N,),
    values float (N,), wall times float (N,), seconds since the epoch) in logged order.
    TensorBoard raises assorted errors on damaged files."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    for path in sorted(Path(run).glob("*tfevents*")):  # TensorBoard would wait for ever on a FIFO
        if path.exists() and not path.is_file() and not path.is_dir():
            raise ValueError(f"{printable(str(path))} is not a regular file (a FIFO, socket or device)")
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        events = acc.Scalars(tag)
        out[tag] = (
            np.array([e.step for e in events]),
            np.array([e.value for e in events]),
            np.array([e.wall_time for e in events], dtype=np.float64),
        )
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
        from jamb_env.rules.ruleset import read_yaml_mapping

        try:  # the one safe YAML reader: size, depth and UTF-8 checked
            cfg = read_yaml_mapping(saved, ValueError, empty_ok=True)
        except (OSError, ValueError):
            cfg = None
        if not isinstance(cfg, dict) or not cfg.get("config_name"):
            print(
                printable(f"warning: {saved} is not a readable run config; grouping {run.name} by its folder name"),
                file=sys.stderr,
            )
        else:
            ruleset, label = Path(str(cfg.get("ruleset", "?"))).stem, str(cfg["config_name"])
            if not cfg.get("init_from"):
                return ruleset, label, 0
            return ruleset, f"{label} (from a model)", init_steps(run, cfg["init_from"])
    ruleset = _selfplay_ruleset(run)
    if ruleset is not None:  # a self-play run (jamb-train-selfplay): its own group, drawn from its step 0
        return ruleset, f"{run.name} (self-play)", 0
    parts = run.name.split("__")
    return (parts[0], parts[1], 0) if len(parts) >= 4 else ("?", run.name, 0)


def _selfplay_ruleset(run: Path) -> str | None:
    """The ruleset (a preset name, or a YAML file's stem) in a self-play run's
    ``selfplay.json``, or None where there is none that reads."""
    from agents.training.config import ConfigError
    from agents.training.runs import read_record
    from agents.training.selfplay import SETTINGS_FILE

    if not (run / SETTINGS_FILE).is_file():
        return None
    try:
        saved = read_record(run / SETTINGS_FILE)
    except ConfigError:
        return None
    ruleset = saved.get("ruleset") if isinstance(saved, dict) else None
    return Path(ruleset).stem if isinstance(ruleset, str) and ruleset.strip() else None


def tag_unit(tag: str) -> str:
    """The unit a scalar's axis names: a share of games for rates (``selfplay/win_rate_vs_…``,
    ``eval/bonus_rate``, ``jamb/illegal_rate``), points for scores and margins, else none."""
    if "rate" in tag.rsplit("/", 1)[-1]:
        return "share"
    if tag.startswith(("eval/", "jamb/")) or "margin" in tag or "score" in tag:
        return "points"
    return ""


def _step_count(value) -> bool:
    """Whether ``value`` (read from a file) is a step count: an int 0..2**53, not a bool (JSON
    reads any size; a huge one made the plot's steps an array of objects, a TypeError)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53


def init_steps(run: Path, init_from: str) -> int:
    """Env steps behind the model a run started from (0, with a warning, if unknown)."""
    import json
    import zipfile

    from agents.training.runs import init_record
    from jamb_env.utils.files import SMALL_FILE_BYTES, ZIP_ERRORS, check_regular_input

    steps = init_record(run).get("steps_before")
    if _step_count(steps):
        return steps
    try:  # a run from before init_from.json: the model file's own count, if it is still there
        if not isinstance(init_from, str):
            raise ValueError("init_from is not a path")
        check_regular_input(init_from)  # zipfile would block on a FIFO
        with zipfile.ZipFile(init_from) as zf:
            if zf.getinfo("data").file_size > SMALL_FILE_BYTES:
                raise ValueError("the model's data entry is too large")
            steps = json.loads(zf.read("data")).get("num_timesteps", 0)
        if not _step_count(steps):
            raise ValueError(f"num_timesteps {steps!r} is no step count")
        return steps
    except (OSError, KeyError, ValueError, RecursionError, AttributeError, *ZIP_ERRORS):
        print(
            f"warning: {printable(run.name)} started from {printable(str(init_from))}, whose step count is unknown "
            "here; "
            "drawing it from step 0",
            file=sys.stderr,
        )
        return 0


#: ``jamb-plot --x``: what the horizontal axis shows, and its label.
X_AXES = {"steps": "environment steps", "minutes": "wall-clock minutes since the run's first logged value"}


def run_curve(
    scalars: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], tag: str, offset: int = 0, x: str = "steps"
) -> tuple[np.ndarray, np.ndarray]:
    """One run's curve of ``tag``: (steps + ``offset``, values), by step, each step once (a
    resumed run logs its checkpoint step again: the later value is kept). With ``x =
    "minutes"`` the first array is instead the wall-clock minutes of each kept value since
    the run's first logged scalar (a resumed run's pause included; ``offset`` unused).
    Raises KeyError for a tag the run does not have, ValueError (minutes) for wall times
    that are not finite or go backwards as the steps go on (a damaged file, a clock set
    back): the curve would be drawn wrong or not at all. Values that are not finite numbers
    (NaN, inf: a diverged run) are left out, since a line through a NaN is not drawn at all:
    :func:`not_finite` names their steps."""
    steps, values, wall = scalars[tag]
    last = {int(s) + offset: (v, w) for s, v, w in zip(steps, values, wall)}
    order = [s for s in sorted(last) if np.isfinite(last[s][0])]  # NaN, inf left out (:func:`not_finite`)
    if x == "minutes":
        start = min(float(w[0]) for _, _, w in scalars.values() if len(w))
        minutes = np.array([(last[s][1] - start) / 60 for s in order])
        if not np.isfinite(minutes).all():
            raise ValueError(f"{tag}: a wall-clock time that is not a finite number of seconds; plot it with --x steps")
        back = np.flatnonzero(np.diff(minutes) < 0)
        if len(back):
            raise ValueError(
                f"{tag}: the wall-clock time goes back at step {order[back[0] + 1]} (a clock set back?); "
                "plot it with --x steps"
            )
        return minutes, np.array([last[s][0] for s in order])
    return np.array(order), np.array([last[s][0] for s in order])


def not_finite(scalars: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], tag: str) -> list[int]:
    """The steps at which ``tag``'s value (the last one logged there) is NaN or infinite:
    what :func:`run_curve` leaves out."""
    steps, values, _ = scalars[tag]
    last = {int(s): v for s, v in zip(steps, values)}
    return sorted(s for s, v in last.items() if not np.isfinite(v))


def curves_figure(
    groups: dict[tuple[str, str], list[tuple[np.ndarray, np.ndarray]]],
    baselines: dict[str, dict[str, float]],
    tag: str,
    title: str | None = None,
    xlabel: str = X_AXES["steps"],
):
    """The matplotlib figure of learning curves: a panel per ruleset (every text from a run's
    files through :func:`~jamb_env.render.sheet.printable`: a control character is drawn as an
    escape, never written raw into an SVG); per group (``(ruleset,
    label)`` -> one ``(steps, values)`` curve per run) the mean over its runs at every step
    any of them logged, with their range shaded; a run counts only from its first to its
    last logged step (linear between them), never with values held past its ends; ``baselines`` (ruleset ->
    agent -> points) as dashed horizontal lines; ``xlabel`` names the horizontal axis
    (:data:`X_AXES`). The caller saves and closes it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"text.parse_math": False}):  # names from files, e.g. '$\\frac{$', are text, not TeX
        return _curves_figure(plt, groups, baselines, tag, title, xlabel)


def _curves_figure(plt, groups, baselines, tag, title, xlabel):
    rulesets = list(dict.fromkeys(r for r, _ in groups))
    fig, axes = plt.subplots(
        1, len(rulesets), figsize=(8 * len(rulesets) if len(rulesets) < 3 else 6 * len(rulesets), 4.5), squeeze=False
    )
    for ax, ruleset in zip(axes[0], rulesets):
        for (rs, config), curves in groups.items():
            if rs != ruleset:
                continue
            steps = np.unique(np.concatenate([s for s, _ in curves]))
            ys = np.array(
                [np.where((steps >= s[0]) & (steps <= s[-1]), np.interp(steps, s, v), np.nan) for s, v in curves]
            )
            line = ax.plot(
                steps,
                np.nanmean(ys, axis=0),
                label=f"{printable(config)} ({len(curves)} run{'s' if len(curves) > 1 else ''})",
            )[0]
            if len(curves) > 1:
                ax.fill_between(steps, np.nanmin(ys, axis=0), np.nanmax(ys, axis=0), color=line.get_color(), alpha=0.2)
        for k, (name, value) in enumerate(sorted(baselines.get(ruleset, {}).items(), key=lambda x: x[1])):
            ax.axhline(
                value,
                linestyle="--",
                linewidth=1,
                color="0.5" if k % 2 else "0.2",
                dashes=(2 + 2 * k, 2),
                label=f"{printable(name).replace('_expected', ' (exact)')}: {value:.1f}",
            )
        ax.set_xlabel(printable(xlabel))
        unit = tag_unit(tag)
        ax.set_ylabel(printable(f"{tag} ({unit})" if unit else tag))
        ax.set_title(printable(ruleset) if len(rulesets) > 1 or not title else printable(title))
        ax.legend(fontsize=8, loc="lower right")
    if title and len(rulesets) > 1:
        fig.suptitle(printable(title))
    elif not title and len(rulesets) == 1:
        axes[0][0].set_title(printable(f"Jamb {rulesets[0]}: {tag}"))
    fig.tight_layout()
    return fig


def save_figure(fig, path: Path) -> None:
    """Write ``fig`` to ``path`` atomically (a failed write leaves the previous file intact;
    the format from the suffix: .png, .pdf, .svg), then close it.

    Raises:
        OSError: the file cannot be written.
    """
    import matplotlib.pyplot as plt

    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120, format=path.suffix.lower().lstrip("."))
    finally:
        plt.close(fig)
