"""Run folders: where a run writes, what it resumes from, the files written beside the logs.

A run folder (default ``runs/<ruleset>__<config>__<seed>__<time>/``) holds ``config.yaml``
(the resolved config), TensorBoard events, ``progress.csv``, ``checkpoints/``,
``evaluations.npz``, the best model (``best_model.zip`` with its score in
:data:`BEST_RECORD`), the final model and, for a run started from a model,
``init_from.json`` (:data:`INIT_RECORD`).

Every file here is written atomically (:mod:`jamb_env.files`): a run killed at any moment,
SIGKILL included, leaves each file either as it was or complete (TensorBoard's event files
are append-only streams whose readers skip a cut-off last record).

Resuming (``train(..., resume=True)``) is lossless: it starts from the newest checkpoint
that loads (a damaged one is skipped with a message; no usable checkpoint restarts the run
from step 0 in its folder). Whatever the killed run logged after that checkpoint's step S
is set aside so that every log is one curve without repeated steps: TensorBoard hides
those events (``purge_step`` S + 1), ``evaluations.npz`` keeps the evaluations up to S,
``progress.csv`` keeps its rows up to S and moves the later ones to
``progress_abandoned_<i>.csv``; new rows and evaluations are appended. The best model is
kept until an evaluation beats its recorded score.
"""

from __future__ import annotations

import json
import math
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jamb_env.files import atomic_save_model, atomic_write, atomic_write_text, remove_temp_files

from .config import ConfigError, config_text

#: In a run started from a model: ``{"init_from": absolute path, "steps_before": env steps
#: behind that model}`` (``scripts/plot.py`` draws the run after those steps).
INIT_RECORD = "init_from.json"
#: ``{"step", "mean_reward", "mean_score"}`` of the evaluation that saved ``best_model.zip``.
BEST_RECORD = "best.json"
BEST_MODEL = "best_model.zip"
EVALUATIONS = "evaluations.npz"
PROGRESS = "progress.csv"


def prepare_run_dir(cfg: Mapping[str, Any], run_dir: str | Path | None, resume: bool) -> tuple[Path, list[Path] | None]:
    """Check where a run goes before anything is written; return ``(run_dir, checkpoints)``:
    for ``resume``, the run's checkpoints newest first (maybe none: the run is restarted
    from step 0), else None. Resuming first removes the temporary files of writes that a
    kill cut short.

    Raises:
        RulesetError: an unknown ruleset.
        ConfigError: ``run_dir`` is a file, or (for a new run) already holds a run.
    """
    from jamb_env import load_ruleset

    ruleset_name = load_ruleset(cfg["ruleset"]).name  # RulesetError for an unknown ruleset
    if run_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path("runs") / f"{ruleset_name}__{cfg['config_name']}__{cfg['seed']}__{stamp}"
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"--run-dir {run_dir} is a file, not a folder")
    if not resume:
        if (run_dir / "config.yaml").exists() or (run_dir / "checkpoints").exists():
            raise ConfigError(f"{run_dir} already holds a run; continue it with --resume {run_dir} or choose another --run-dir")
        return run_dir, None
    for folder in (run_dir, run_dir / "checkpoints"):
        for p in remove_temp_files(folder):
            print(f"removed {p}: a write cut short when the run was killed")
    return run_dir, checkpoints(run_dir)


def checkpoint_steps(path: Path) -> int | None:
    """The steps in a checkpoint's name ``model_<steps>_steps.zip`` (None for other names)."""
    parts = path.name.split("_")
    if len(parts) == 3 and parts[0] == "model" and parts[2] == "steps.zip" and parts[1].isdigit():
        return int(parts[1])
    return None


def checkpoints(run_dir: Path) -> list[Path]:
    """The checkpoints in ``run_dir/checkpoints``, the most steps first."""
    found = [p for p in (Path(run_dir) / "checkpoints").glob("model_*_steps.zip") if checkpoint_steps(p) is not None]
    return sorted(found, key=checkpoint_steps, reverse=True)


def checkpoint_problem(path: Path) -> str | None:
    """Why the model file ``path`` cannot be a checkpoint (truncated, damaged, not a model),
    or None when it looks complete (a quick check of the zip, before loading it)."""
    cut_short = "not a complete zip file (cut short while being written?)"
    try:
        if not zipfile.is_zipfile(path):
            return cut_short
        with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
            # a complete zip ends with its end record (+ comment); a cut-off model file may
            # still hold the end record of a zip inside it (torch's .pth files are zips)
            f.seek(-22 - len(zf.comment), 2)
            if not f.read(4) == b"PK\x05\x06":
                return cut_short
            bad = zf.testzip()
            if bad is not None:
                return f"damaged zip file (member {bad} fails its checksum)"
            missing = {"data", "policy.pth"} - set(zf.namelist())
            if missing:
                return f"not a model file (no {', '.join(sorted(missing))} in the zip)"
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        return f"unreadable: {type(exc).__name__}: {str(exc)[:200]}"
    return None


def model_steps(path: Path) -> int | None:
    """``num_timesteps`` saved in an SB3 model zip (None when unreadable), without loading it."""
    try:
        with zipfile.ZipFile(path) as zf:
            steps = json.loads(zf.read("data")).get("num_timesteps")
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, EOFError):
        return None
    return steps if isinstance(steps, int) else None


def resume_model(candidates: list[Path], env, cfg: Mapping[str, Any]):
    """``(model, checkpoint)``: the MaskablePPO model of the newest checkpoint in
    ``candidates`` that loads on ``env``, skipping (with a printed message naming the file
    and why) the ones that do not; ``(None, None)`` when none does.

    Raises:
        ConfigError: a checkpoint does not fit ``env`` (another observation or action space).
    """
    from sb3_contrib import MaskablePPO

    for path in candidates:
        problem = checkpoint_problem(path)
        if problem is None:
            try:
                model = MaskablePPO.load(path, env=env, device=cfg["device"])
            except ValueError as exc:
                if "spaces do not match" in str(exc):
                    raise ConfigError(f"cannot resume {path} with this run's env: {str(exc)[:200]}") from exc
                problem = f"cannot be loaded: {type(exc).__name__}: {str(exc)[:200]}"
            except Exception as exc:  # torch and SB3 raise assorted errors for damaged files
                problem = f"cannot be loaded: {type(exc).__name__}: {str(exc)[:200]}"
            else:
                print(f"resuming from {path} (step {model.num_timesteps})")
                return model, path
        print(f"skipping checkpoint {path}: {problem}")
    return None, None


def save_checkpoint(model, run_dir: Path) -> Path:
    """Save ``model`` atomically as ``run_dir/checkpoints/model_<steps>_steps.zip``."""
    path = Path(run_dir) / "checkpoints" / f"model_{model.num_timesteps}_steps.zip"
    return atomic_save_model(model, path)


def write_run_files(run_dir: Path, cfg: Mapping[str, Any], started_from: dict | None) -> None:
    """Create ``run_dir`` with ``config.yaml`` and, for a run started from a model, its
    :data:`INIT_RECORD` (both written atomically)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if started_from is not None:
        atomic_write_text(run_dir / INIT_RECORD, json.dumps(started_from, indent=1))
    atomic_write_text(run_dir / "config.yaml", config_text(cfg))


def init_record(run_dir: Path) -> dict:
    """``run_dir/init_from.json`` (written by a run started from a model), else ``{}``."""
    try:
        record = json.loads((run_dir / INIT_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def free_name(run_dir: Path, stem: str, suffix: str) -> Path:
    """``run_dir/<stem>_<i><suffix>`` with the smallest ``i`` >= 1 not taken."""
    i = 1
    while (run_dir / f"{stem}_{i}{suffix}").exists():
        i += 1
    return run_dir / f"{stem}_{i}{suffix}"


# ---------------------------------------------------------------- evaluation history


def load_evaluations(run_dir: Path, keep_before: int | None) -> tuple[dict[str, list], dict[int, float]]:
    """``(history, all_means)``: the evaluations of ``run_dir/evaluations.npz`` with fewer
    than ``keep_before`` steps (``{"timesteps", "results", "ep_lengths"}`` lists; empty for
    a new run, ``keep_before`` None) and the mean result of every evaluation in the file
    (step -> mean, later ones included: they may have saved the best model). An unreadable
    file is moved aside to ``evaluations_unreadable_<i>.npz`` with a message."""
    import numpy as np

    history: dict[str, list] = {"timesteps": [], "results": [], "ep_lengths": []}
    path = run_dir / EVALUATIONS
    if keep_before is None or not path.exists():
        return history, {}
    try:
        with np.load(path) as data:
            steps = [int(s) for s in data["timesteps"]]
            results = [list(map(float, r)) for r in data["results"]]
            lengths = [list(map(int, r)) for r in data["ep_lengths"]]
        if not len(steps) == len(results) == len(lengths):
            raise ValueError("timesteps, results and ep_lengths differ in length")
    except Exception as exc:  # np.load raises assorted errors for damaged files
        aside = free_name(run_dir, "evaluations_unreadable", ".npz")
        path.replace(aside)
        print(f"{path} is unreadable ({type(exc).__name__}: {str(exc)[:200]}); moved to {aside.name}, starting a new evaluation history")
        return history, {}
    all_means = {s: float(np.mean(r)) for s, r in zip(steps, results) if r}
    last = -1
    for s, r, n in zip(steps, results, lengths):
        if s < keep_before and s > last:  # strictly increasing steps
            history["timesteps"].append(s)
            history["results"].append(r)
            history["ep_lengths"].append(n)
            last = s
    return history, all_means


def save_evaluations(run_dir: Path, history: Mapping[str, list]) -> None:
    """Write ``evaluations.npz`` (SB3's ``EvalCallback`` layout) atomically."""
    import numpy as np

    arrays = {k: np.asarray(v) for k, v in history.items()}
    atomic_write(run_dir / EVALUATIONS, lambda f: np.savez(f, **arrays))


def best_so_far(run_dir: Path, all_means: Mapping[int, float]) -> float:
    """The evaluation score (mean result) behind ``run_dir/best_model.zip``, which a new
    evaluation must beat to replace it; ``-inf`` when there is no best model.

    The score is :data:`BEST_RECORD`'s when that names the model's step, else the
    evaluation at that step in ``all_means``, else (unknown) the best of ``all_means``.
    """
    best = run_dir / BEST_MODEL
    if not best.exists():
        return -math.inf
    step = model_steps(best)
    if step is None:
        print(f"{best} is unreadable; the next evaluation replaces it")
        return -math.inf
    try:
        record = json.loads((run_dir / BEST_RECORD).read_text(encoding="utf-8"))
        if record.get("step") == step and isinstance(record.get("mean_reward"), (int, float)):
            return float(record["mean_reward"])
    except (OSError, ValueError, AttributeError):
        pass
    if step in all_means:
        return all_means[step]
    return max(all_means.values(), default=-math.inf)


def save_best(model, run_dir: Path, mean_reward: float, mean_score: float | None) -> None:
    """Save ``model`` as the best model, then its :data:`BEST_RECORD` (both atomically)."""
    atomic_save_model(model, run_dir / BEST_MODEL)
    record = {"step": int(model.num_timesteps), "mean_reward": float(mean_reward), "mean_score": mean_score}
    atomic_write_text(run_dir / BEST_RECORD, json.dumps(record, indent=1))
