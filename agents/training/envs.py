"""Training and evaluation environments of a config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def make_env_fn(cfg: Mapping[str, Any]):
    """A no-argument factory of the config's ``JambEnv`` (for SB3's ``make_vec_env``)."""
    from jamb_env import JambEnv

    ruleset = cfg["ruleset"]
    scale = cfg["env"]["reward_scale"]
    turn_features = cfg["env"]["turn_features"]

    def make():
        return JambEnv(ruleset=ruleset, reward_scale=scale, turn_features=turn_features)

    return make


def make_envs(cfg: Mapping[str, Any]):
    """``(env, eval_env)``: the training VecEnv (``env.vec_env`` kind, ``env.n_envs`` games,
    seeded ``seed``) and the evaluation VecEnv (``eval.n_envs`` games seeded ``eval.seed``)."""
    if cfg["env"]["vec_env"] == "batched":
        from jamb_env import JambVecEnv

        opts = {"reward_scale": cfg["env"]["reward_scale"], "turn_features": cfg["env"]["turn_features"]}
        env = JambVecEnv(cfg["env"]["n_envs"], cfg["ruleset"], seed=cfg["seed"], **opts)
        eval_env = JambVecEnv(cfg["eval"]["n_envs"], cfg["ruleset"], seed=cfg["eval"]["seed"], **opts)
    else:
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        vec_cls = DummyVecEnv if cfg["env"]["vec_env"] == "dummy" else SubprocVecEnv
        env = make_vec_env(make_env_fn(cfg), n_envs=cfg["env"]["n_envs"], seed=cfg["seed"], vec_env_cls=vec_cls)
        eval_env = make_vec_env(make_env_fn(cfg), n_envs=cfg["eval"]["n_envs"], seed=cfg["eval"]["seed"])
    return env, eval_env
