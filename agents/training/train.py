"""MaskablePPO training on ``JambEnv``: envs -> model -> callbacks -> learn -> evaluate -> save.

Every run writes to ``runs/<ruleset>__<config>__<seed>__<time>/``: TensorBoard events
(SB3's ``rollout/``, ``train/`` and ``time/``; ``jamb/`` true game scores and score parts
of training episodes; ``eval/`` masked evaluation scores beside the baselines' scores on
the same games, ``eval/baseline_<agent>``; the config as text), ``progress.csv``, checkpoints,
``evaluations.npz``, the best model (``best_model.zip``, its score in ``best.json``) and the
final model, ``config.yaml`` (the resolved config) and, for a run started from a model,
``init_from.json`` (that model and the env steps behind it). Every file is written
atomically; resuming continues every log without repeating a step (:mod:`.runs`). The
config schema is :mod:`agents.training.config`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from agents.model_files import stamp_ruleset
from agents.training.baselines import baseline_scores
from agents.training.callbacks import StopRequest, make_callbacks, run_logger
from agents.training.config import ConfigError, algo_kwargs, check_steps_left
from agents.training.envs import make_envs, seed_train_env
from agents.training.lean_ppo import LeanMaskablePPO
from agents.training.run_logs import logs_from
from agents.training.runs import BEST_MODEL, open_run_dir, resume_model, save_final, write_run_files
from agents.training.weights import init_from
from jamb_env import load_ruleset


class TrainingInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped :func:`train`. ``checkpoint`` and ``final_model`` are the
    files saved on the way out (None when it stopped before training or while saving);
    ``exit_code`` is the shell's 128 + signal number."""

    def __init__(
        self,
        signum: int,
        run_dir: Path | None = None,
        step: int | None = None,
        checkpoint: Path | None = None,
        final_model: Path | None = None,
    ):
        super().__init__(signum)
        self.signum = signum
        self.run_dir = run_dir
        self.step = step
        self.checkpoint = checkpoint
        self.final_model = final_model

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __str__(self) -> str:
        if self.final_model is not None:
            return (
                f"interrupted by {self.signal_name} at step {self.step}: saved checkpoint {self.checkpoint} and "
                f"final model {self.final_model}; continue with --resume {self.run_dir}"
            )
        return f"interrupted by {self.signal_name} before anything more was saved" + (
            f"; continue with --resume {self.run_dir}" if self.run_dir else ""
        )


class _Signals:
    """SIGINT and SIGTERM handlers while :func:`train` runs (main thread only): outside the
    ``graceful`` part they abort at once (:class:`TrainingInterrupted`); inside it, the
    first one sets ``stop`` (training ends after the current step, then the run is saved)
    and a second one aborts."""

    def __init__(self, stop: StopRequest, enabled: bool):
        self.stop = stop
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.graceful = False
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        if self.enabled:
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._old[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._old.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame) -> None:
        if self.graceful and self.stop.signum is None:
            self.stop.signum = signum
            name = signal.Signals(signum).name
            os.write(
                2,
                f"\n{name}: stopping after the current step to save a checkpoint and the final model "
                "(again to quit at once)\n".encode(),
            )
            return
        raise TrainingInterrupted(signum)


def new_model(cfg: Mapping[str, Any], env) -> MaskablePPO:
    """A fresh :class:`~.lean_ppo.LeanMaskablePPO` model with the config's ``algo`` settings,
    ``precision`` and ``torch_threads``.

    Raises:
        ConfigError: MaskablePPO rejects the settings.
    """
    extra = {"precision": cfg["precision"], "torch_threads": cfg["torch_threads"], "compile_update": cfg["compile"]}
    try:
        return LeanMaskablePPO(
            "MlpPolicy", env, seed=cfg["seed"], device=cfg["device"], verbose=0, **extra, **algo_kwargs(cfg["algo"])
        )
    except Exception as exc:  # SB3 validates its arguments with assorted exception types
        raise ConfigError(
            f"key 'algo' (or 'device'): MaskablePPO does not accept these settings: "
            f"{type(exc).__name__}: {str(exc)[:300]}"
        ) from exc


def start_model(
    cfg: Mapping[str, Any], env, run_dir: Path, candidates: list[Path] | None, trusted: bool = False
) -> tuple[MaskablePPO, Path | None, dict | None]:
    """``(model, checkpoint, started_from)``: for a resumed run (``candidates``: its
    checkpoints, newest first) the newest checkpoint that loads; else (or with none) a new
    model, from ``init_from``'s weights if given (``started_from``: its record, else None).
    Model files are read as data (``trusted``: as SB3 does, :mod:`agents.model_files`).

    Raises:
        ConfigError: a checkpoint that does not fit ``env``, or settings MaskablePPO rejects.
    """
    if candidates is not None:
        model, checkpoint = resume_model(candidates, env, cfg, trusted)
        if model is not None:
            model.precision, model.torch_threads = cfg["precision"], cfg["torch_threads"]  # not saved with it
            model.compile_update = cfg["compile"]
            return model, checkpoint, None
        why = "no checkpoint that loads" if candidates else "no checkpoint (killed before its first one)"
        print(f"{run_dir} has {why}: starting it again from step 0 with its saved config")
    model = new_model(cfg, env)
    rules = load_ruleset(cfg["ruleset"])  # a model of other rules (same shapes) to start from: said, not silent
    return model, None, init_from(model, cfg["init_from"], trusted=trusted, rules=rules)


def train(
    cfg: dict[str, Any],
    run_dir: str | Path | None = None,
    progress_bar: bool = True,
    resume: bool = False,
    handle_signals: bool = True,
    imitation_games: str | Path | None = None,
    trusted: bool = False,
) -> dict[str, Any]:
    """Train MaskablePPO as ``cfg`` says; return a summary dict.

    With ``resume``, ``run_dir`` is an existing run: training continues from its newest
    checkpoint that loads (damaged ones are skipped with a message; with none, the run
    starts again from step 0 in its folder) up to ``total_timesteps``, continuing the
    folder's logs (:mod:`.runs`: no step logged twice, the evaluation history and the best
    model kept). Checkpoints fall just after PPO updates, so a killed run loses at most
    one checkpoint interval. The dice streams restart from the seed, so a resumed run is
    not bit-identical to an uninterrupted one. A resumed run whose checkpoint already has
    ``total_timesteps`` steps or more is refused (:func:`.config.check_steps_left`)
    before anything is written.

    A config with an ``imitation`` section (``imitation.games`` > 0) first fits the new
    model to a teacher's games (:mod:`.imitation`; kept in ``imitation_games``, default the
    run's ``imitation/`` folder) and evaluates it at step 0; a run resumed from a
    checkpoint skips it, one restarted from step 0 reuses its ``imitation_model.zip``.

    Every run ends with an evaluation at its last step (unless it has one there) and saves
    a checkpoint there and ``final_model.zip``. With ``handle_signals`` (in the main
    thread), SIGINT or SIGTERM during training stops it after the current step, saves a
    checkpoint and the final model and raises :class:`TrainingInterrupted` naming them;
    before training starts, or a second time, they raise it at once.

    Returns:
        ``{"run_dir", "final_model", "checkpoint", "best_model" (None if none),
        "eval_score" (mean true score of this process's last evaluation, points),
        "baselines" (name -> points on the same games), "timesteps", "wall_time_s"}``.

    The model files a run loads (``init_from``, a resumed run's checkpoints) are read as
    data: one holding pickled code is refused (:mod:`agents.model_files`) unless
    ``trusted`` (``--trust-model``), which loads them as SB3 does.

    The run folder is locked for the whole run (:func:`.runs.open_run_dir`): a second
    writer there, a ``resume`` included, is refused before it reads or writes anything.

    Raises:
        ConfigError: a bad run folder, one another process is writing
            (:class:`.run_lock.RunFolderBusy`), settings MaskablePPO rejects, or (``resume``) a
            checkpoint that does not fit, or one with ``total_timesteps`` steps already.
        TrainingInterrupted: SIGINT or SIGTERM (a KeyboardInterrupt).
    """
    stop = StopRequest()
    # the run folder's lock is held from before its checks to the end (one writer per folder)
    with _Signals(stop, handle_signals) as signals, open_run_dir(cfg, run_dir, resume) as (run_dir, candidates):
        torch.set_num_threads(cfg["torch_threads"])
        env, eval_env = make_envs(cfg)
        try:
            model, checkpoint, imitated = _ready_model(
                cfg, env, run_dir, candidates if resume else None, trusted, progress_bar, imitation_games
            )
            # logs: a resumed run sets aside what was logged after its checkpoint
            keep_before = logs_from(resume, model.num_timesteps if checkpoint is not None else None)
            model.set_logger(run_logger(run_dir, keep_before))
            try:
                baselines, eval_cb, wall, saved, final = _learn(
                    cfg, model, run_dir, eval_env, keep_before, stop, signals, imitated, checkpoint, progress_bar
                )
            finally:
                model.logger.close()
        finally:
            env.close()
            eval_env.close()
    if stop.signum is not None:
        raise TrainingInterrupted(stop.signum, run_dir, int(model.num_timesteps), saved, final)
    return _summary(run_dir, model, saved, final, eval_cb, baselines, wall)


def _summary(run_dir: Path, model, saved: Path, final: Path, eval_cb, baselines: dict, wall: float) -> dict[str, Any]:
    """:func:`train`'s summary of a run that ended."""
    return {
        "run_dir": str(run_dir),
        "final_model": str(final),
        "checkpoint": str(saved),
        "best_model": str(run_dir / BEST_MODEL) if (run_dir / BEST_MODEL).exists() else None,
        "eval_score": float(np.mean(eval_cb.last_scores)) if eval_cb.last_scores else None,
        "baselines": baselines,
        "timesteps": int(model.num_timesteps),
        "wall_time_s": wall,
    }


def _ready_model(cfg, env, run_dir: Path, candidates, trusted: bool, progress_bar: bool, imitation_games):
    """``(model, checkpoint, imitated)``: the run's model (:func:`start_model`; a resumed
    run with nothing to train refused before anything is written), the run's files written,
    and a new (or restarted) run fitted to the teacher's games when the config says so
    (``imitated``: what :mod:`.imitation` did, else None)."""
    model, checkpoint, started_from = start_model(cfg, env, run_dir, candidates, trusted)
    stamp_ruleset(model, load_ruleset(cfg["ruleset"]))  # every model file of the run names its rules
    if checkpoint is not None:  # nothing to train: refused before anything is written
        check_steps_left(run_dir, int(model.num_timesteps), cfg["total_timesteps"])
    seed_train_env(env, cfg)  # the model seeded its env with SB3's seed + i: the run's own games again
    write_run_files(run_dir, cfg, started_from)
    imitated = None
    if (
        checkpoint is None and cfg["imitation"]["games"]
    ):  # a new (or restarted) run starts from the teacher (after config.yaml: a kill here resumes)
        from agents.training.imitation import start_from_teacher

        imitated = start_from_teacher(model, cfg, run_dir, progress_bar, imitation_games)
    return model, checkpoint, imitated


def _learn(cfg, model, run_dir: Path, eval_env, keep_before, stop, signals, imitated, checkpoint, progress_bar):
    """Learn up to ``total_timesteps`` with the run's callbacks (the imitated policy
    evaluated at step 0 first), evaluate at the last step, save; ``(baselines, eval_cb,
    wall_time_s, checkpoint, final_model)``."""
    baselines = baseline_scores(cfg)
    callbacks, eval_cb = make_callbacks(cfg, run_dir, eval_env, baselines, keep_before, stop)
    if imitated is not None:  # the curve starts at the imitated policy: imitation/ and eval/ at step 0
        from agents.training.imitation import log_imitation

        log_imitation(run_dir, imitated)
        eval_cb.init_callback(model)
        eval_cb.evaluate()

    # learn, evaluate at the last step, save
    start = time.perf_counter()
    signals.graceful = True
    remaining = cfg["total_timesteps"] - model.num_timesteps
    rollout = model.n_envs * model.n_steps
    if remaining > 0 and remaining % rollout:  # PPO learns from whole rollouts: say so, not a bar past its end
        print(
            f"note: PPO trains whole rollouts of {rollout:,} steps (env.n_envs x algo.n_steps): "
            f"{remaining:,} steps to go become {-(-remaining // rollout) * rollout:,}"
        )
    if remaining > 0:
        model.learn(
            total_timesteps=remaining,
            callback=callbacks,
            progress_bar=progress_bar,
            reset_num_timesteps=checkpoint is None,
        )
    else:
        callbacks.init_callback(model)
    if stop.signum is None and eval_cb.last_eval_step != model.num_timesteps:
        eval_cb.evaluate()
    wall = time.perf_counter() - start
    saved, final = save_final(model, run_dir)
    return baselines, eval_cb, wall, saved, final
