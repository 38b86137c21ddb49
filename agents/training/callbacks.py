"""SB3 callbacks of a training run: game scores, seeded masked evaluation, checkpoints.

TensorBoard tags: ``jamb/`` (true game scores and score parts of finished training games),
``eval/`` (masked evaluation scores, ``eval/baseline_<agent>`` beside them) and ``config``
(the resolved config as text).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback

from .config import config_text


class JambScoreCallback(BaseCallback):
    """Logs the true game score and its parts of every finished training game; at the
    start, the config as text and the baselines' scores."""

    def __init__(self, config_text: str, baselines: Mapping[str, float], verbose: int = 0):
        super().__init__(verbose)
        self.config_text = config_text
        self.baselines = dict(baselines)

    def _on_training_start(self) -> None:
        self.logger.record("config", "```\n" + self.config_text + "```", exclude=("stdout", "log", "json", "csv"))
        for name, value in self.baselines.items():
            self.logger.record(f"eval/baseline_{name}", value)
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


class SeededEvalCallback(MaskableEvalCallback):
    """Masked evaluation on the same seeded games every time (the eval env is reseeded
    with ``eval_seed``); logs the true score and the baselines' scores beside it."""

    def __init__(self, eval_env, eval_seed: int, baselines: Mapping[str, float], **kwargs):
        super().__init__(eval_env, **kwargs)
        self.eval_seed = eval_seed
        self.baselines = dict(baselines)
        self.last_scores: list[int] = []  # true scores of the latest evaluation

    def _on_step(self) -> bool:
        if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
            self.eval_env.seed(self.eval_seed)
            for name, value in self.baselines.items():  # flat lines to read the curve against
                self.logger.record(f"eval/baseline_{name}", value)
            self.last_scores = []
        return super()._on_step()

    def _log_success_callback(self, locals_: dict, globals_: dict) -> None:
        info = locals_["info"]
        if locals_["done"] and "score" in info:
            self.last_scores.append(info["score"])
            self.logger.record_mean("eval/score", info["score"])
            if "score_parts" in info:
                self.logger.record_mean("eval/bonus_rate", info["score_parts"]["bonus_columns"] / len(info["column_scores"]))


def make_callbacks(cfg: Mapping[str, Any], run_dir: Path, eval_env, baselines: Mapping[str, float]) -> tuple[CallbackList, SeededEvalCallback]:
    """The run's callbacks (scores, evaluation every ``eval.freq`` env steps, checkpoints
    every ``checkpoint.freq``) and the evaluation callback (for its ``last_scores``)."""
    n_envs = cfg["env"]["n_envs"]
    eval_cb = SeededEvalCallback(
        eval_env,
        cfg["eval"]["seed"],
        baselines,
        n_eval_episodes=cfg["eval"]["episodes"],
        eval_freq=max(cfg["eval"]["freq"] // n_envs, 1),
        log_path=str(run_dir),
        best_model_save_path=str(run_dir),
        deterministic=True,
        verbose=0,
        warn=False,  # JambVecEnv reports true episode returns without a Monitor wrapper
    )
    ckpt_cb = CheckpointCallback(
        save_freq=max(cfg["checkpoint"]["freq"] // n_envs, 1), save_path=str(run_dir / "checkpoints"), name_prefix="model"
    )
    return CallbackList([JambScoreCallback(config_text(cfg), baselines), eval_cb, ckpt_cb]), eval_cb
