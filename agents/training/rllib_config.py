"""The RLlib training config schema (``jamb-train --engine rllib``): read, fill defaults, validate.

An RLlib training config is a flat YAML file (``configs/rllib_*.yaml``)::

    engine: rllib               # marks the file as an RLlib config (jamb-train then needs no --engine)
    ruleset: classic            # preset name or rules YAML path
    seed: 0                     # training games, network initialisation (jamb_env/engine/seeding.py)
    total_timesteps: 2000000    # env steps, all env runners together
    num_cpus: 2                 # CPUs of the local Ray the script starts (ignored with --address)
    torch_threads: 1            # torch CPU threads of the driver (the learner) and of each env runner
    num_env_runners: 0          # 0: sample in the driver; N: N Ray actors (1 CPU each) sample
    num_envs_per_env_runner: 8  # games per env runner, stepped together by the batched kernels
    rollout_fragment_length: auto  # steps per game per sample call: train_batch_size / (games x runners), or a number
    train_batch_size: 2048      # env steps per PPO update
    minibatch_size: 256         # SGD minibatch (at most train_batch_size)
    num_epochs: 5               # passes over each train batch
    lr: 3.0e-4
    gamma: 0.995
    lambda: 0.95                # GAE lambda
    clip_param: 0.2
    entropy_coeff: 0.01
    vf_loss_coeff: 0.5
    grad_clip: 0.5
    reward_scale: 0.01          # rewards in hundreds of points
    hidden_sizes: [256, 256]    # separate policy and value MLPs (as SB3's net_arch [256, 256]), linear heads
    eval_freq: 50000            # env steps between evaluations (greedy, masked)
    eval_games: 50              # games per evaluation: seeds eval_seed + g
    eval_seed: 30000000         # the validation games (jamb_env/engine/seeding.py); 20000000: the canonical ones
    checkpoint_freq: 100000     # env steps between checkpoints
    keep_checkpoints: 3         # the newest N checkpoints are kept
    players: 2                  # optional: multiplayer self-play (2..5 seats, one shared policy); absent: solitaire
    scoring: separate           # with players: "separate" or "shared" (jamb_env.multiplayer)
    reward: score               # with players: "score", "win" or "margin" (jamb_env.multiplayer)

``load_rllib_config(path)`` validates a file; a resolved config is a plain dict with these
keys plus ``config_name`` (the file's stem). Errors are :class:`~agents.training.config.ConfigError`
naming the file, the key, what was given and what is allowed. The resource settings are
bounded (``_BOUNDS``: ``num_cpus`` and ``num_env_runners`` up to 1,024, ``torch_threads``
256, ``num_envs_per_env_runner`` 65,536, ``train_batch_size`` and ``rollout_fragment_length``
1,048,576, ``eval_games`` 100,000).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.training.config import (
    CONFIGS_DIR,
    MAX_EVAL_GAMES,
    MAX_N_ENVS,
    MAX_PROCESSES,
    MAX_ROLLOUT,
    MAX_TORCH_THREADS,
    ConfigError,
    finite_number,
    read_config,
)
from jamb_env.engine.doors import MAX_WIDTH, SEED_LIMIT, layer_widths
from jamb_env.rules.ruleset import read_yaml_mapping

ENGINE = "rllib"
#: ``jamb-train --engine rllib``'s config without ``--config`` (found from the package: any folder works).
DEFAULT_RLLIB_CONFIG = CONFIGS_DIR / "rllib_classic.yaml"

DEFAULTS: dict[str, Any] = {
    "engine": ENGINE,
    "ruleset": "classic",
    "seed": 0,
    "total_timesteps": 2_000_000,
    "num_cpus": 2,
    "torch_threads": 1,
    "num_env_runners": 0,
    "num_envs_per_env_runner": 8,
    "rollout_fragment_length": "auto",
    "train_batch_size": 2048,
    "minibatch_size": 256,
    "num_epochs": 5,
    "lr": 3.0e-4,
    "gamma": 0.995,
    "lambda": 0.95,
    "clip_param": 0.2,
    "entropy_coeff": 0.01,
    "vf_loss_coeff": 0.5,
    "grad_clip": 0.5,
    "reward_scale": 0.01,
    "hidden_sizes": [256, 256],
    "eval_freq": 50_000,
    "eval_games": 50,
    "eval_seed": 30_000_000,
    "checkpoint_freq": 100_000,
    "keep_checkpoints": 3,
    "players": None,
    "scoring": "separate",
    "reward": "score",
}

#: key -> (low, high, low allowed): the real-valued settings and their ranges.
_RANGES = {
    "lr": (0.0, 1.0, False),
    "gamma": (0.0, 1.0, False),
    "lambda": (0.0, 1.0, False),
    "clip_param": (0.0, 10.0, False),
    "entropy_coeff": (0.0, 10.0, True),
    "vf_loss_coeff": (0.0, 10.0, True),
    "grad_clip": (0.0, 1e6, False),
}
_POSITIVE = (
    "total_timesteps",
    "num_cpus",
    "torch_threads",
    "num_envs_per_env_runner",
    "train_batch_size",
    "minibatch_size",
    "num_epochs",
    "eval_freq",
    "eval_games",
    "checkpoint_freq",
    "keep_checkpoints",
)

#: key -> (lowest, highest, what it sizes): the resource settings' bounds
#: (:mod:`agents.training.config`'s ``MAX_*``).
_BOUNDS = {
    "num_cpus": (1, MAX_PROCESSES, "CPUs of the local Ray"),
    "torch_threads": (1, MAX_TORCH_THREADS, "torch CPU threads"),
    "num_env_runners": (0, MAX_PROCESSES, "Ray actors sampling, one CPU each"),
    "num_envs_per_env_runner": (1, MAX_N_ENVS, "games stepped together per env runner"),
    "rollout_fragment_length": (1, MAX_ROLLOUT, "env steps per game per sample call"),
    "train_batch_size": (1, MAX_ROLLOUT, "env steps per PPO update"),
    "eval_games": (1, MAX_EVAL_GAMES, "games per evaluation"),
}


def is_rllib_config(raw: Mapping[str, Any]) -> bool:
    """Whether a config file's mapping says ``engine: rllib``."""
    return isinstance(raw, Mapping) and raw.get("engine") == ENGINE


def load_rllib_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read an RLlib training config, fill defaults, apply ``overrides`` (None values
    skipped) and validate.

    Raises:
        FileNotFoundError: no such file.
        ConfigError: invalid YAML, unknown keys, values of the wrong type or out of range.
    """
    return validate_rllib_config(read_config(path), path, overrides)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def validate_rllib_config(
    raw: Mapping[str, Any], path: str | Path, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``raw`` with defaults filled and ``overrides`` applied, validated; ``path`` names the
    file in error messages and gives ``config_name``.

    Raises:
        ConfigError: unknown keys, values of the wrong type or out of range.
    """
    path = Path(path)
    cfg = copy.deepcopy(DEFAULTS)
    for key, value in raw.items():
        if key not in DEFAULTS:
            raise ConfigError(f"{path}: key '{key}': unknown; allowed: {', '.join(DEFAULTS)}")
        cfg[key] = copy.deepcopy(value)
    for key, value in (overrides or {}).items():
        if value is not None:
            cfg[key] = value

    def fail(key: str, expected: str) -> None:
        raise ConfigError(f"{path}: key '{key}': expected {expected}, got {cfg[key]!r}")

    if cfg["engine"] != ENGINE:
        fail("engine", f"'{ENGINE}' (SB3 configs have no engine key: configs/ppo_*.yaml)")
    if not isinstance(cfg["ruleset"], str) or not cfg["ruleset"]:
        fail("ruleset", "a preset name or a YAML path")
    if not _is_int(cfg["seed"]) or not 0 <= cfg["seed"] < SEED_LIMIT:
        fail("seed", "an integer in 0..2**32-1")
    for key in _POSITIVE:
        if not _is_int(cfg[key]) or cfg[key] <= 0:
            fail(key, "a positive integer")
    if not _is_int(cfg["num_env_runners"]) or cfg["num_env_runners"] < 0:
        fail("num_env_runners", "an integer >= 0 (0: sample in the driver process)")
    rfl = cfg["rollout_fragment_length"]
    if rfl != "auto" and (not _is_int(rfl) or rfl <= 0):
        fail("rollout_fragment_length", "a positive integer or 'auto'")
    for key, (low, most, what) in _BOUNDS.items():
        if _is_int(cfg[key]) and cfg[key] > most:
            raise ConfigError(f"{path}: key '{key}': {cfg[key]:,} is too large; allowed: {low}..{most:,} ({what})")
    if cfg["minibatch_size"] < 2:
        fail("minibatch_size", "at least 2 (advantage normalisation needs 2 samples)")
    if cfg["minibatch_size"] > cfg["train_batch_size"]:
        raise ConfigError(
            f"{path}: key 'minibatch_size': {cfg['minibatch_size']} is more than train_batch_size "
            f"{cfg['train_batch_size']}; allowed: 2..train_batch_size"
        )
    for key, (lo, hi, lo_ok) in _RANGES.items():
        v = cfg[key]
        if isinstance(v, str):
            try:  # YAML 1.1 reads 3e-4 (no dot) as text
                v = cfg[key] = float(v)
            except ValueError:
                pass
        if not finite_number(v) or not (lo < v <= hi or (lo_ok and v == lo)):
            fail(key, f"a number in {'[' if lo_ok else '('}{lo}, {hi}]")
        cfg[key] = float(v)
    scale = cfg["reward_scale"]
    if not finite_number(scale) or scale <= 0:
        fail("reward_scale", "a positive number")
    hidden = cfg["hidden_sizes"]
    if not isinstance(hidden, list) or not layer_widths(hidden):
        fail("hidden_sizes", f"a non-empty list of layer widths (integers 1..{MAX_WIDTH:,}), e.g. [256, 256]")
    top = SEED_LIMIT - cfg["eval_games"]
    if not _is_int(cfg["eval_seed"]) or not 0 <= cfg["eval_seed"] <= top:
        fail("eval_seed", f"an integer in 0..{top} (game g plays seed eval_seed + g < 2**32)")
    players = cfg["players"]
    if players is not None and (not _is_int(players) or not 2 <= players <= 5):
        fail("players", "an integer in 2..5 (multiplayer self-play), or leave it out (solitaire)")
    if cfg["scoring"] not in ("separate", "shared"):
        fail("scoring", "'separate' or 'shared'")
    if cfg["reward"] not in ("score", "win", "margin"):
        fail("reward", "'score', 'win' or 'margin'")
    cfg["config_name"] = path.stem
    return cfg


def resume_rllib_config(saved: Path, total_timesteps: int | None = None) -> dict[str, Any]:
    """The resolved config saved in a run folder (``config.yaml``), checked like a new one;
    ``total_timesteps`` (if not None) replaces the saved one.

    Raises:
        ConfigError: the file is unreadable or not a valid RLlib config.
    """
    try:
        cfg = read_yaml_mapping(saved, ConfigError)
    except OSError as exc:
        raise ConfigError(f"{saved}: not a readable config: {exc}") from exc
    name = cfg.pop("config_name", "resumed")
    cfg = validate_rllib_config(cfg, saved, {"total_timesteps": total_timesteps})
    cfg["config_name"] = name
    return cfg
