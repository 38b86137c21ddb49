"""Run folders: where a run writes, what it resumes from, the files written beside the logs.

A run folder (default ``runs/<ruleset>__<config>__<seed>__<time>/``) holds ``config.yaml``
(the resolved config), TensorBoard events, ``progress.csv``, ``checkpoints/``, the best and
the final model and, for a run started from a model, ``init_from.json`` (:data:`INIT_RECORD`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .config import ConfigError, config_text

#: In a run started from a model: ``{"init_from": absolute path, "steps_before": env steps
#: behind that model}`` (``scripts/plot.py`` draws the run after those steps).
INIT_RECORD = "init_from.json"


def prepare_run_dir(cfg: Mapping[str, Any], run_dir: str | Path | None, resume: bool) -> tuple[Path, Path | None]:
    """Check where a run goes before anything is written; return ``(run_dir, checkpoint)``
    (the checkpoint to resume from; None for a new run).

    Raises:
        RulesetError: an unknown ruleset.
        ConfigError: ``run_dir`` is a file, or (for a new run) already holds a run.
        FileNotFoundError: ``resume`` and ``run_dir`` has no checkpoint.
    """
    from jamb_env import load_ruleset

    ruleset_name = load_ruleset(cfg["ruleset"]).name  # RulesetError for an unknown ruleset
    if run_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path("runs") / f"{ruleset_name}__{cfg['config_name']}__{cfg['seed']}__{stamp}"
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"--run-dir {run_dir} is a file, not a folder")
    if not resume and ((run_dir / "config.yaml").exists() or (run_dir / "checkpoints").exists()):
        raise ConfigError(f"{run_dir} already holds a run; continue it with --resume {run_dir} or choose another --run-dir")
    checkpoint = latest_checkpoint(run_dir) if resume else None
    if resume and checkpoint is None:
        raise FileNotFoundError(f"{run_dir} has no checkpoint to resume from (checkpoints/model_*_steps.zip)")
    return run_dir, checkpoint


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most steps in ``run_dir/checkpoints`` (None if none)."""
    ckpts = [p for p in (run_dir / "checkpoints").glob("model_*_steps.zip") if p.stem.split("_")[1].isdigit()]
    return max(ckpts, key=lambda p: int(p.stem.split("_")[1])) if ckpts else None


def resume_model(checkpoint: Path, env, cfg: Mapping[str, Any], run_dir: Path):
    """The MaskablePPO model of ``checkpoint`` on ``env``; the run's ``progress.csv`` so
    far is kept as ``progress_until_<steps>.csv`` (SB3's CSV writer starts a new file).

    Raises:
        ConfigError: the checkpoint does not fit ``env``.
    """
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(checkpoint, env=env, device=cfg["device"])
    except ValueError as exc:
        raise ConfigError(f"cannot resume {checkpoint} with this run's env: {str(exc)[:200]}") from exc
    old_csv = run_dir / "progress.csv"
    if old_csv.exists():
        old_csv.rename(run_dir / f"progress_until_{model.num_timesteps}.csv")
    return model


def write_run_files(run_dir: Path, cfg: Mapping[str, Any], started_from: dict | None) -> None:
    """Create ``run_dir`` with ``config.yaml`` and, for a run started from a model, its
    :data:`INIT_RECORD`."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if started_from is not None:
        (run_dir / INIT_RECORD).write_text(json.dumps(started_from, indent=1))
    (run_dir / "config.yaml").write_text(config_text(cfg))


def init_record(run_dir: Path) -> dict:
    """``run_dir/init_from.json`` (written by a run started from a model), else ``{}``."""
    try:
        record = json.loads((run_dir / INIT_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}
