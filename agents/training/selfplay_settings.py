"""A self-play run's settings (:mod:`agents.training.selfplay`): the table and training
settings saved in the run folder's ``selfplay.json`` (:data:`SETTINGS_FILE`) when it starts,
read back and checked when it resumes (a resumed run must have the same ones; only
:data:`CHANGEABLE` may change). :mod:`agents.training.selfplay` re-exports every name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.training.config import MAX_N_ENVS, MAX_ROLLOUT, ConfigError, finite_number
from agents.training.runs import read_record
from jamb_env.engine.doors import SEED_LIMIT
from jamb_env.rules import match as M

#: The run's settings, saved in the run folder when it starts.
SETTINGS_FILE = "selfplay.json"
#: The settings in :data:`SETTINGS_FILE`: a resumed run must have the same.
SETTING_KEYS = (
    "ruleset",
    "players",
    "scoring",
    "reward",
    "reward_scale",
    "seed",
    "baselines",
    "self_play",
    "n_envs",
    "n_steps",
)
#: What a resumed run may change (not saved).
CHANGEABLE = ("total_timesteps", "snapshot_freq", "eval_freq", "eval_games")


def ruleset_key(ruleset: str) -> str:
    """A ruleset as saved in :data:`SETTINGS_FILE`: a preset name as given, a YAML path
    (what :func:`jamb_env.rules.load_ruleset` takes for a path) made absolute."""
    text = str(ruleset)
    if text.endswith((".yaml", ".yml")) or "/" in text:
        return str(Path(text).expanduser().resolve())
    return text


def _same(key: str, a: Any, b: Any) -> bool:
    if key == "ruleset":
        return ruleset_key(a) == ruleset_key(b)
    if key == "baselines":
        return list(a) == list(b)
    return a == b


def setting_differences(saved: Mapping[str, Any], given: Mapping[str, Any], label=str) -> list[str]:
    """``"<label(key)>: saved <value>, given <value>"`` for every setting in ``given`` that
    differs from ``saved`` (keys not in :data:`SETTING_KEYS` are ignored)."""
    return [
        f"{label(key)}: saved {saved[key]!r}, given {value!r}"
        for key, value in given.items()
        if key in SETTING_KEYS and key in saved and not _same(key, saved[key], value)
    ]


def read_run_settings(run_dir: Path) -> dict[str, Any] | None:
    """The settings saved in ``run_dir/selfplay.json``; None when there is no such file.

    Raises:
        ConfigError: the file is unreadable, lacks a setting or has one of the wrong
            type or out of range (:func:`check_run_settings`).
    """
    path = Path(run_dir) / SETTINGS_FILE
    saved = read_record(path, what="the run's settings")
    if saved is None:
        return None
    missing = [key for key in SETTING_KEYS if not isinstance(saved, dict) or key not in saved]
    if missing:
        raise ConfigError(f"{path} lacks the setting(s) {', '.join(missing)} (keys: {', '.join(SETTING_KEYS)})")
    check_run_settings(saved, path)
    return saved


def _is_int(value: Any, lo: int, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _is_number(value: Any) -> bool:
    return finite_number(value)


def check_run_settings(saved: Mapping[str, Any], path: Path | str) -> None:
    """ConfigError unless every setting of :data:`SETTING_KEYS` in ``saved`` (a run's
    :data:`SETTINGS_FILE`, at ``path``) has its type and range: the bounds of the
    command line's checks (``jamb-train-selfplay``).

    Raises:
        ConfigError: ``"<path>: <key> must be <what is allowed>, got <value>"``.
    """
    from agents.registry import AGENT_NAMES
    from jamb_env.multiplayer import REWARDS

    def bad(key: str, allowed: str) -> ConfigError:
        return ConfigError(f"{path}: {key} must be {allowed}, got {saved[key]!r}")

    if not isinstance(saved["ruleset"], str) or not saved["ruleset"].strip():
        raise bad("ruleset", "a preset name or a rules YAML path")
    if not _is_int(saved["players"], M.MIN_PLAYERS, M.MAX_PLAYERS):
        raise bad("players", f"an integer {M.MIN_PLAYERS}..{M.MAX_PLAYERS}")
    if not isinstance(saved["scoring"], str) or saved["scoring"] not in M.SCORING_MODES:
        raise bad("scoring", f"one of {', '.join(M.SCORING_MODES)}")
    if not isinstance(saved["reward"], str) or saved["reward"] not in REWARDS:
        raise bad("reward", f"one of {', '.join(REWARDS)}")
    if not _is_number(saved["reward_scale"]) or saved["reward_scale"] <= 0:
        raise bad("reward_scale", "a finite number above 0")
    if not _is_int(saved["seed"], 0, SEED_LIMIT - 1):
        raise bad("seed", f"an integer 0..{SEED_LIMIT - 1}")
    names = saved["baselines"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in AGENT_NAMES for n in names):
        raise bad("baselines", f"a non-empty list of agent names ({', '.join(AGENT_NAMES)})")
    if not _is_number(saved["self_play"]) or not 0.0 <= saved["self_play"] <= 1.0:
        raise bad("self_play", "a probability in 0..1")
    if not _is_int(saved["n_envs"], 1, MAX_N_ENVS):
        raise bad("n_envs", f"an integer 1..{MAX_N_ENVS:,}")
    if not _is_int(saved["n_steps"], 1, MAX_ROLLOUT):
        raise bad("n_steps", f"an integer 1..{MAX_ROLLOUT:,}")
    if not 2 <= saved["n_envs"] * saved["n_steps"] <= MAX_ROLLOUT:
        raise ConfigError(
            f"{path}: n_envs x n_steps must be 2..{MAX_ROLLOUT:,} steps per rollout, "
            f"got {saved['n_envs']:,} x {saved['n_steps']:,}"
        )


@dataclass
class SelfPlaySettings:
    ruleset: str
    num_players: int
    scoring: str
    reward: str
    reward_scale: float

    def saved(self, seed: int, baselines, self_play: float, n_envs: int, n_steps: int) -> dict[str, Any]:
        """The run's settings as :data:`SETTINGS_FILE` holds them."""
        return {
            "ruleset": ruleset_key(self.ruleset),
            "players": int(self.num_players),
            "scoring": self.scoring,
            "reward": self.reward,
            "reward_scale": float(self.reward_scale),
            "seed": int(seed),
            "baselines": list(baselines),
            "self_play": float(self_play),
            "n_envs": int(n_envs),
            "n_steps": int(n_steps),
        }
