"""MaskablePPO training on ``JambEnv``: envs -> model -> callbacks -> learn -> save.

Every run writes to ``runs/<ruleset>__<config>__<seed>__<time>/``: TensorBoard events
(SB3's ``rollout/``, ``train/`` and ``time/``; ``jamb/`` true game scores and score parts
of training episodes; ``eval/`` masked evaluation scores beside the baselines' scores on
the same games, ``eval/baseline_<agent>``; the config as text), ``progress.csv``, checkpoints, the best and the
final model, ``config.yaml`` (the resolved config) and, for a run started from a model,
``init_from.json`` (that model and the env steps behind it). The config schema is
:mod:`agents.training.config`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import configure

from .baselines import baseline_scores
from .callbacks import make_callbacks
from .config import ConfigError, algo_kwargs
from .envs import make_envs
from .runs import prepare_run_dir, resume_model, write_run_files
from .weights import init_from


def new_model(cfg: Mapping[str, Any], env) -> MaskablePPO:
    """A fresh MaskablePPO model with the config's ``algo`` settings.

    Raises:
        ConfigError: MaskablePPO rejects the settings.
    """
    try:
        return MaskablePPO("MlpPolicy", env, seed=cfg["seed"], device=cfg["device"], verbose=0, **algo_kwargs(cfg["algo"]))
    except Exception as exc:  # SB3 validates its arguments with assorted exception types
        raise ConfigError(f"key 'algo' (or 'device'): MaskablePPO does not accept these settings: {type(exc).__name__}: {str(exc)[:300]}") from exc


def train(cfg: dict[str, Any], run_dir: str | Path | None = None, progress_bar: bool = True, resume: bool = False) -> dict[str, Any]:
    """Train MaskablePPO as ``cfg`` says; return a summary dict.

    With ``resume``, ``run_dir`` is an existing run: training continues from its latest
    checkpoint up to ``total_timesteps``, logging into the same folder (TensorBoard curves
    continue at the checkpoint's step; a killed run loses at most one checkpoint
    interval). The dice streams restart from the seed, so a resumed run is not
    bit-identical to an uninterrupted one.

    Returns:
        ``{"run_dir", "final_model", "eval_score" (last masked evaluation mean, points),
        "baselines" (name -> points on the same games), "timesteps", "wall_time_s"}``.
    """
    run_dir, checkpoint = prepare_run_dir(cfg, run_dir, resume)  # errors before anything is written
    torch.set_num_threads(cfg["torch_threads"])

    # envs
    env, eval_env = make_envs(cfg)

    # model: a checkpoint to resume, or a new one (from init_from's weights if given)
    if checkpoint is not None:
        model, started_from = resume_model(checkpoint, env, cfg, run_dir), None
    else:
        model = new_model(cfg, env)
        started_from = init_from(model, cfg["init_from"])
    write_run_files(run_dir, cfg, started_from)
    model.set_logger(configure(str(run_dir), ["tensorboard", "csv"]))

    # callbacks
    baselines = baseline_scores(cfg)
    callbacks, eval_cb = make_callbacks(cfg, run_dir, eval_env, baselines)

    # learn
    start = time.perf_counter()
    remaining = cfg["total_timesteps"] - model.num_timesteps
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=callbacks, progress_bar=progress_bar, reset_num_timesteps=checkpoint is None)
    wall = time.perf_counter() - start

    # save
    final = run_dir / "final_model.zip"
    model.save(final)
    env.close()
    eval_env.close()
    return {
        "run_dir": str(run_dir),
        "final_model": str(final),
        "eval_score": float(np.mean(eval_cb.last_scores)) if eval_cb.last_scores else None,
        "baselines": baselines,
        "timesteps": int(model.num_timesteps),
        "wall_time_s": wall,
    }
