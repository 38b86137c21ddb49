"""jamb_env: the rules of Jamb and a masked Gymnasium environment for it.

Public API::

    load_ruleset(name_or_path) -> Ruleset      list_rulesets() -> list[str]
    JambEnv(ruleset="classic", render_mode=None, illegal_action="terminate", reward_scale=1.0,
            turn_features=True, mask_in_observation=False, mask_dtype="int8")
    JambVecEnv(num_envs, ruleset="classic", seed=None, illegal_action="terminate",
               reward_scale=1.0, render_mode=None, turn_features=True, game_seeds=None)
                                               (an SB3 VecEnv; needs the train extra)
    preset_env_id(preset) -> "Jamb-<preset>-v1"
    IllegalActionError, RulesetError           (both ValueError subclasses)
    IllegalActionWarning                       (an illegal action ended a game: illegal_action="terminate")

``help(jamb_env.JambEnv)`` and ``help(jamb_env.JambVecEnv)`` give every argument.
Submodules, each imported when first used (``jamb_env.wrappers`` after ``import jamb_env``):
``env``, ``vector``, ``gym_vector`` (Gymnasium's vector env), ``wrappers``, ``multiplayer``
(PettingZoo: the multiplayer extra), ``multiplayer_vector`` (``SeatVecEnv``: the train extra),
``openspiel`` (the openspiel extra), ``testing`` (``api_test``), ``replay``, ``render``. A
door whose library is missing raises ImportError naming the extra to install. Every bad
argument at every door raises ValueError (:mod:`jamb_env.engine.doors`).

Importing the package registers ``Jamb-v1`` (the current observation) and ``Jamb-v0``
(without the turn features) with Gymnasium (``gymnasium.make("Jamb-v1", ruleset="classic")``),
and one id per preset file of ``jamb_env/rules/presets/``, Gymnasium's convention for variants:
``Jamb-<preset>-v1`` (``Jamb-classic_down-v1``) is ``gymnasium.make("Jamb-v1",
ruleset="<preset>")``, for tools that take an env id alone (rl-zoo's hyper-parameter files
are keyed by it; CleanRL's ``--env-id``).
"""

from __future__ import annotations

import importlib

from jamb_env.rules import Action, GameState, Ruleset, list_rulesets, load_ruleset
from jamb_env.utils.errors import IllegalActionError, IllegalActionWarning, RulesetError

__version__ = "0.4.0"  # the package version (pyproject.toml reads it here)

ENV_ID = "Jamb-v1"

try:  # the rules core (jamb_env.rules) works without Gymnasium; the envs need it
    import gymnasium
except ImportError:  # pragma: no cover - exercised by the import-blocking test
    gymnasium = None


def _register_envs() -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID, entry_point="jamb_env.env:JambEnv", vector_entry_point="jamb_env.gym_vector:JambVectorEnv"
        )
    if "Jamb-v0" not in gymnasium.registry:
        gymnasium.register(
            id="Jamb-v0",
            entry_point="jamb_env.env:JambEnv",
            vector_entry_point="jamb_env.gym_vector:JambVectorEnv",
            kwargs={"turn_features": False},
        )
    for preset in list_rulesets(playable=False):  # file names only: nothing is loaded at import
        env_id = f"Jamb-{preset}-v1"  # the same env as Jamb-v1 with ruleset=<preset>
        if preset.isidentifier() and env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point="jamb_env.env:JambEnv",
                vector_entry_point="jamb_env.gym_vector:JambVectorEnv",
                kwargs={"ruleset": preset},
            )


if gymnasium is not None:
    _register_envs()


def preset_env_id(preset: str) -> str:
    """The registered id of a preset, ``Jamb-<preset>-v1`` (``gymnasium.make`` of it is
    ``gymnasium.make("Jamb-v1", ruleset=preset)``). Raises RulesetError for a name that is
    not a preset file of ``jamb_env/rules/presets/``."""
    names = list_rulesets(playable=False)
    if preset not in names:
        raise RulesetError(f"unknown preset {preset!r}; the presets are {', '.join(names)}")
    return f"Jamb-{preset}-v1"


#: The submodules ``jamb_env.<name>`` reaches (imported on first use: their libraries load then).
SUBMODULES = (
    "env",
    "vector",
    "gym_vector",
    "wrappers",
    "multiplayer",
    "multiplayer_vector",
    "openspiel",
    "testing",
    "replay",
    "render",
)


def __getattr__(name: str):
    # The envs import Gymnasium (JambVecEnv also stable-baselines3 and torch): only when asked for.
    if name in ("JambEnv", "EnvState"):
        from jamb_env import env

        return getattr(env, name)
    if name == "JambVecEnv":
        from jamb_env.vector import JambVecEnv

        return JambVecEnv
    if name in SUBMODULES:
        return importlib.import_module(f"jamb_env.{name}")
    raise AttributeError(f"module 'jamb_env' has no attribute {name!r}")


__all__ = [
    "JambVecEnv",
    "Action",
    "ENV_ID",
    "EnvState",
    "GameState",
    "IllegalActionError",
    "IllegalActionWarning",
    "JambEnv",
    "Ruleset",
    "RulesetError",
    "list_rulesets",
    "load_ruleset",
    "preset_env_id",
]
