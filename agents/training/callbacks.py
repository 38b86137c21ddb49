"""SB3 callbacks and logger of a training run: game scores, seeded masked evaluation,
checkpoints, stopping on request, and the run's TensorBoard + ``progress.csv`` logger.

TensorBoard tags: ``jamb/`` (true game scores and score parts of finished training games),
``eval/`` (masked evaluation scores, ``eval/baseline_<agent>`` beside them) and ``config``
(the resolved config as text).

Evaluations fall on multiples of ``eval.freq`` env steps (the first step at or past each)
and checkpoints on the first rollout start at or past each multiple of
``checkpoint.freq``, counted from step 0 of the run, so a resumed run keeps the schedule of
an uninterrupted one. A checkpoint is saved between rollouts, just after a PPO update, so
resuming from it loses no collected experience.
"""

from __future__ import annotations

import csv
import io
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat, filter_excluded_keys

from agents.training.config import config_text
from agents.training.envs import eval_seeds, set_game_seeds
from agents.training.run_logs import baseline_tags, config_markdown, tensorboard_writer
from agents.training.runs import (
    PROGRESS,
    append_evaluation,
    best_so_far,
    free_name,
    load_evaluations,
    save_best,
    save_checkpoint,
    save_evaluations,
)
from jamb_env.utils.files import atomic_write_text, read_regular_bytes

#: The step column of ``progress.csv`` (SB3's name; every row carries it).
STEP_KEY = "time/total_timesteps"


def next_multiple(step: int, freq: int) -> int:
    """The first multiple of ``freq`` after ``step``."""
    return (step // freq + 1) * freq


class JambScoreCallback(BaseCallback):
    """Logs the true game score and its parts of every finished training game; at the
    start (unless ``log_start`` is false, as when resuming: the step is logged already),
    the config as text and the baselines' scores."""

    def __init__(self, config_text: str, baselines: Mapping[str, float], log_start: bool = True, verbose: int = 0):
        super().__init__(verbose)
        self.config_text = config_text
        self.baselines = dict(baselines)
        self.log_start = log_start

    def _on_training_start(self) -> None:
        if not self.log_start:
            return
        self.logger.record("config", config_markdown(self.config_text), exclude=("stdout", "log", "json", "csv"))
        for tag, value in baseline_tags(self.baselines).items():
            self.logger.record(tag, value)
        self.logger.dump(self.num_timesteps)

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"]):
            if not done:
                continue
            self.logger.record_mean("jamb/illegal_rate", float(bool(info.get("illegal_action"))))
            if "score_parts" not in info:
                continue
            parts = info["score_parts"]
            self.logger.record_mean("jamb/score", info["score"])
            for key in ("upper", "bonus", "difference", "lower"):
                self.logger.record_mean(f"jamb/{key}", parts[key])
            self.logger.record_mean("jamb/bonus_rate", parts["bonus_columns"] / len(info["column_scores"]))
            for col, pts in info["column_scores"].items():
                self.logger.record_mean(f"jamb/column_{col}", pts)
        return True


class SeededEvalCallback(BaseCallback):
    """Masked evaluation on the same seeded games every time (eval env ``i`` is reseeded
    with ``eval_seeds[i]``: :func:`.envs.eval_seeds`) at every multiple of ``freq`` env steps; logs the true score and
    the baselines' scores beside it, appends to ``run_dir/evaluations.npz`` and saves
    ``best_model.zip`` when the mean result beats the best so far (all atomically).

    ``keep_before``: None for a new run; else the evaluation history of ``run_dir`` before
    that step is continued and the best model's score restored (:mod:`.runs`).
    """

    def __init__(
        self,
        eval_env,
        eval_seeds: list[int],
        baselines: Mapping[str, float],
        n_eval_episodes: int,
        freq: int,
        run_dir: str | Path,
        keep_before: int | None = None,
        deterministic: bool = True,
        verbose: int = 0,
    ):
        super().__init__(verbose)
        self.eval_env = eval_env
        self.eval_seeds = list(eval_seeds)
        self.baselines = dict(baselines)
        self.n_eval_episodes = n_eval_episodes
        self.freq = freq
        self.run_dir = Path(run_dir)
        self.deterministic = deterministic
        self.history, all_means = load_evaluations(self.run_dir, keep_before)
        self.best_mean_reward = best_so_far(self.run_dir, all_means) if keep_before is not None else -math.inf
        self.last_scores: list[int] = []  # true scores of the latest evaluation (of this process)
        self.next_eval = 0

    @property
    def last_eval_step(self) -> int | None:
        """The step of the latest evaluation in the history (None if none)."""
        return self.history["timesteps"][-1] if self.history["timesteps"] else None

    def _init_callback(self) -> None:
        self.next_eval = next_multiple(self.model.num_timesteps, self.freq)

    def _on_step(self) -> bool:
        if self.model.num_timesteps >= self.next_eval:
            self.evaluate()
        return True

    def evaluate(self) -> float:
        """Evaluate the model now (at ``model.num_timesteps``); return the mean result."""
        step = int(self.model.num_timesteps)
        set_game_seeds(self.eval_env, self.eval_seeds)  # not env.seed(s): JambVecEnv derives per-game seeds from s
        if step > 0:  # flat lines to read the curve against (step 0 has them from the run's start: JambScoreCallback)
            for tag, value in baseline_tags(self.baselines).items():
                self.logger.record(tag, value)
        self.last_scores = []
        rewards, lengths = evaluate_policy(
            self.model,
            self.eval_env,
            n_eval_episodes=self.n_eval_episodes,
            deterministic=self.deterministic,
            return_episode_rewards=True,
            warn=False,
            callback=self._log_score,
            use_masking=True,
        )  # warn=False: JambVecEnv reports true episode returns without a Monitor wrapper
        append_evaluation(self.history, step, rewards, lengths)  # never two evaluations at one step
        save_evaluations(self.run_dir, self.history)
        mean_reward = float(np.mean(rewards))
        self.logger.record("eval/mean_reward", mean_reward)
        self.logger.record("eval/mean_ep_length", float(np.mean(lengths)))
        self.logger.record(STEP_KEY, step, exclude="tensorboard")
        dump_only(self.logger, ("eval/", STEP_KEY), step)
        if mean_reward > self.best_mean_reward:
            mean_score = float(np.mean(self.last_scores)) if self.last_scores else None
            save_best(self.model, self.run_dir, mean_reward, mean_score)
            self.best_mean_reward = mean_reward
        self.next_eval = next_multiple(step, self.freq)
        return mean_reward

    def _log_score(self, locals_: dict, globals_: dict) -> None:
        info = locals_["info"]
        if locals_["done"] and "score" in info:
            self.last_scores.append(info["score"])
            self.logger.record_mean("eval/score", info["score"])
            if "score_parts" in info:
                self.logger.record_mean(
                    "eval/bonus_rate", info["score_parts"]["bonus_columns"] / len(info["column_scores"])
                )


class RolloutCheckpointCallback(BaseCallback):
    """Saves ``run_dir/checkpoints/model_<steps>_steps.zip`` (atomically) at the first
    rollout start at or past each multiple of ``freq`` env steps, i.e. just after a PPO
    update, and writes the pending ``progress.csv`` rows with it."""

    def __init__(self, freq: int, run_dir: str | Path, verbose: int = 0):
        super().__init__(verbose)
        self.freq = freq
        self.run_dir = Path(run_dir)
        self.next_save = 0
        self.saved: list[Path] = []

    def _init_callback(self) -> None:
        self.next_save = next_multiple(self.model.num_timesteps, self.freq)

    def _on_rollout_start(self) -> None:
        if self.model.num_timesteps >= self.next_save:
            self.saved.append(save_checkpoint(self.model, self.run_dir))
            flush_progress(self.model.logger)
            self.next_save = next_multiple(self.model.num_timesteps, self.freq)

    def _on_step(self) -> bool:
        return True


class StopRequest:
    """A flag set from outside (a signal handler) to stop training after the current step."""

    def __init__(self) -> None:
        self.signum: int | None = None


class StopOnRequestCallback(BaseCallback):
    """Ends ``learn`` after the current env step once ``request.signum`` is set."""

    def __init__(self, request: StopRequest, verbose: int = 0):
        super().__init__(verbose)
        self.request = request

    def _on_step(self) -> bool:
        return self.request.signum is None


def make_callbacks(
    cfg: Mapping[str, Any],
    run_dir: Path,
    eval_env,
    baselines: Mapping[str, float],
    keep_before: int | None = None,
    stop: StopRequest | None = None,
) -> tuple[CallbackList, SeededEvalCallback]:
    """The run's callbacks (scores, evaluation every ``eval.freq`` env steps, checkpoints
    every ``checkpoint.freq``, stopping on ``stop``) and the evaluation callback (for its
    ``last_scores`` and :meth:`~SeededEvalCallback.evaluate`). ``keep_before``: None for a
    new run, else the step a resumed run continues its logs from (:func:`run_logger`)."""
    eval_cb = SeededEvalCallback(
        eval_env,
        eval_seeds(cfg),
        baselines,
        n_eval_episodes=cfg["eval"]["episodes"],
        freq=cfg["eval"]["freq"],
        run_dir=run_dir,
        keep_before=keep_before,
    )
    callbacks = [
        JambScoreCallback(config_text(cfg), baselines, log_start=keep_before in (None, 0)),
        eval_cb,
        RolloutCheckpointCallback(cfg["checkpoint"]["freq"], run_dir),
    ]
    if stop is not None:
        callbacks.append(StopOnRequestCallback(stop))
    return CallbackList(callbacks), eval_cb


# ---------------------------------------------------------------- logs


class TensorBoardFormat(TensorBoardOutputFormat):
    """SB3's TensorBoard writer on :func:`.run_logs.tensorboard_writer`: what an earlier
    attempt of the run logged at ``purge_step`` or later is first moved aside."""

    def __init__(self, folder: str, purge_step: int | None = None):
        self.writer = tensorboard_writer(folder, purge_step)
        self._is_closed = False


def run_logger(run_dir: Path, keep_before: int | None, progress: bool = True) -> Logger:
    """The SB3 logger of a run: TensorBoard events and (with ``progress``)
    :class:`ProgressCSV` in ``run_dir``. ``keep_before`` (:func:`.run_logs.logs_from`): None
    for a new run; else the step from which what an earlier (killed) attempt logged is set
    aside (TensorBoard ``purge_step``, ``progress_abandoned_<i>.csv``): the checkpoint's
    step + 1 when resuming, 0 when restarting a run from scratch."""
    formats = [TensorBoardFormat(str(run_dir), keep_before)]
    if progress:
        formats.append(ProgressCSV(Path(run_dir) / PROGRESS, keep_before))
    return Logger(folder=str(run_dir), output_formats=formats)


def dump_only(logger: Logger, prefixes: tuple[str, ...], step: int) -> None:
    """Write the logger's pending values whose key starts with one of ``prefixes`` at
    ``step`` and leave the others pending for SB3's own dump.

    The evaluation logs this way: SB3 logs the ``train/*`` values of each update at the
    next rollout's dump, so a full dump at an evaluation would put the values of the last
    update at a step SB3 has already dumped them at (the final evaluation), or split a
    rollout's ``jamb/*`` means in two."""
    keys = [k for k in logger.name_to_value if k.startswith(prefixes)]
    if not keys:
        return
    values = {k: logger.name_to_value.pop(k) for k in keys}
    excluded = {k: logger.name_to_excluded.pop(k, ()) for k in keys}
    for k in keys:
        logger.name_to_count.pop(k, None)
    for fmt in logger.output_formats:
        fmt.write(values, excluded, step)


def flush_progress(logger) -> None:
    """Write the logger's pending :class:`ProgressCSV` rows now."""
    for fmt in getattr(logger, "output_formats", ()):
        if isinstance(fmt, ProgressCSV):
            fmt.flush()


def _row_step(row: Mapping[str, str | None]) -> int:
    try:
        return int(float(row.get(STEP_KEY) or 0))
    except (TypeError, ValueError, OverflowError):  # OverflowError: "inf", "1e400"
        return 0


#: The largest ``progress.csv`` a resumed run reads back (a row per rollout: about 200,000 rows).
MAX_PROGRESS_BYTES = 256 * 1024 * 1024


class ProgressCSV(KVWriter):
    """``progress.csv``: SB3's CSV log, rewritten atomically (never cut off), every row
    with its step in :data:`STEP_KEY`, one row per step (values dumped at the step of the
    last row join it). A resumed run keeps the rows before ``keep_before``
    and appends its own; the rows from ``keep_before`` on (logged by a killed attempt after
    the checkpoint resumed from) and any malformed ones go to a new
    ``progress_abandoned_<i>.csv``, so no row is lost and no file overwritten with less.
    A file that cannot be read back (not a regular file, over :data:`MAX_PROGRESS_BYTES`,
    a field over csv's size limit) is moved to ``progress_unreadable_<i>.csv``, with a message.

    The file is rewritten at every dump while it has at most ``small_rows`` rows, then at
    most every ``min_interval_s`` seconds, and at :meth:`flush` (with each checkpoint)
    and :meth:`close`.
    """

    def __init__(
        self, path: Path, keep_before: int | None = None, min_interval_s: float = 10.0, small_rows: int = 2000
    ):
        self.path = Path(path)
        self.keys: list[str] = []
        self.rows: list[dict[str, str]] = []
        self.min_interval_s = min_interval_s
        self.small_rows = small_rows
        self._last_flush = 0.0
        self._dirty = False
        if keep_before is not None and self.path.exists():
            self._load(keep_before)

    def _load(self, keep_before: int) -> None:
        try:  # a regular file of bounded size: a FIFO would block, /dev/zero never end
            text = read_regular_bytes(self.path, limit=MAX_PROGRESS_BYTES).decode("utf-8", errors="replace")
            reader = csv.DictReader(io.StringIO(text))
            header = list(reader.fieldnames or [])
            rows = list(reader)
        except (OSError, csv.Error) as exc:  # csv.Error: a field over csv's size limit
            aside = free_name(self.path.parent, "progress_unreadable", ".csv")
            os.replace(self.path, aside)
            print(
                f"{self.path} is unreadable ({' '.join(str(exc).split())[:200]}); moved to {aside.name}, starting a "
                f"new {self.path.name}"
            )
            self.flush()
            return
        abandoned = []
        for row in rows:
            if (
                None in row or None in row.values() or _row_step(row) >= keep_before
            ):  # malformed, or after the checkpoint
                abandoned.append(row)
            else:
                self.rows.append(row)
        self.keys = header
        if abandoned:
            aside = free_name(self.path.parent, "progress_abandoned", ".csv")
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(header)
            for row in abandoned:
                writer.writerow([row.get(k) or "" for k in header] + list(row.get(None) or []))
            atomic_write_text(aside, out.getvalue())
            first, last = _row_step(abandoned[0]), _row_step(abandoned[-1])
            print(
                f"{self.path}: {len(abandoned)} row(s) of steps {first}..{last} (logged after the step resumed from) "
                f"moved to {aside.name}"
            )
        self.flush()

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        values = filter_excluded_keys(key_values, key_excluded, "csv")
        if not values:
            return
        row = {k: "" if v is None else str(v) for k, v in values.items()}
        row.setdefault(STEP_KEY, str(int(step)))
        for k in row:
            if k not in self.keys:
                self.keys.append(k)
        last = self.rows[-1] if self.rows else None
        if last is not None and last.get(STEP_KEY) == row[STEP_KEY] and not (last.keys() & row.keys()) - {STEP_KEY}:
            last.update(row)  # one row per step: an evaluation and SB3's dump at the same step
        else:
            self.rows.append(row)
        self._dirty = True
        if len(self.rows) <= self.small_rows or time.monotonic() - self._last_flush >= self.min_interval_s:
            self.flush()

    def flush(self) -> None:
        """Rewrite the file with every row so far (atomically)."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=self.keys, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        atomic_write_text(self.path, out.getvalue())
        self._last_flush = time.monotonic()
        self._dirty = False

    def close(self) -> None:
        if self._dirty or not self.path.exists():
            self.flush()
