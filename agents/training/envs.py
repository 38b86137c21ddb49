"""Training and evaluation environments of a config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.evaluation.solitaire import eval_seeds as canonical_seeds


def make_env_fn(cfg: Mapping[str, Any]):
    """A no-argument factory of the config's ``JambEnv`` (for SB3's ``make_vec_env``)."""
    from jamb_env import JambEnv

    ruleset = cfg["ruleset"]
    scale = cfg["env"]["reward_scale"]
    turn_features = cfg["env"]["turn_features"]

    def make():
        return JambEnv(ruleset=ruleset, reward_scale=scale, turn_features=turn_features)

    return make


def train_seeds(cfg: Mapping[str, Any]) -> list[int]:
    """The training games' seeds: ``game_seed(seed, i, stage)`` for env ``i``, with stage
    ``STAGE_FINETUNE`` for a run started from a model (``init_from``), else
    ``STAGE_TRAIN`` (jamb_env/engine/seeding.py): no two seeds or stages share a game."""
    from jamb_env.engine.seeding import STAGE_FINETUNE, STAGE_TRAIN, game_seeds

    stage = STAGE_FINETUNE if cfg.get("init_from") else STAGE_TRAIN
    return game_seeds(cfg["seed"], cfg["env"]["n_envs"], stage)


def eval_seeds(cfg: Mapping[str, Any]) -> list[int]:
    """The evaluation games' seeds: ``eval.seed + i`` for eval env ``i`` (with the default
    eval.seed 20,000,000 and one game per env: the canonical evaluation games)."""
    return canonical_seeds(cfg["eval"]["n_envs"], cfg["eval"]["seed"])


def make_envs(cfg: Mapping[str, Any]):
    """``(env, eval_env)``: the training VecEnv (``env.vec_env`` kind, ``env.n_envs`` games,
    seeded by :func:`train_seeds`) and the evaluation VecEnv (``eval.n_envs`` games, seeded
    by :func:`eval_seeds`). The batched, dummy and subproc kinds play the same games."""
    if cfg["env"]["vec_env"] == "batched":
        from jamb_env import JambVecEnv

        opts = {"reward_scale": cfg["env"]["reward_scale"], "turn_features": cfg["env"]["turn_features"]}
        env = JambVecEnv(cfg["env"]["n_envs"], cfg["ruleset"], **opts)
        eval_env = JambVecEnv(cfg["eval"]["n_envs"], cfg["ruleset"], **opts)
    else:
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        vec_cls = DummyVecEnv if cfg["env"]["vec_env"] == "dummy" else SubprocVecEnv
        env = make_vec_env(make_env_fn(cfg), n_envs=cfg["env"]["n_envs"], vec_env_cls=vec_cls)
        eval_env = make_vec_env(make_env_fn(cfg), n_envs=cfg["eval"]["n_envs"])
    set_game_seeds(eval_env, eval_seeds(cfg))
    seed_train_env(env, cfg)
    return env, eval_env


def set_game_seeds(env, seeds: list[int]) -> None:
    """Seed env ``i`` of a VecEnv with ``seeds[i]`` at its next reset (``JambVecEnv``, or
    SB3's VecEnvs of ``JambEnv``s, where ``env.seed(s)`` would mean ``s + i``)."""
    if hasattr(env, "seed_games"):
        env.seed_games(seeds)
    else:
        env._seeds = list(seeds)  # SB3's per-env seed list for the next reset


def seed_train_env(env, cfg: Mapping[str, Any]) -> None:
    """Set the training VecEnv's games for its next reset to :func:`train_seeds`.

    Call it again after building or loading a model: SB3 models seed their env in
    ``set_random_seed`` (``env.seed(seed)``: env ``i`` gets ``seed + i`` on SB3's VecEnvs,
    overlapping streams across seeds, and stage 0 on ``JambVecEnv``)."""
    set_game_seeds(env, train_seeds(cfg))
