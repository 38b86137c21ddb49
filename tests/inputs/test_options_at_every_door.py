"""Contract table: every door refuses a bad option with ValueError naming the option (the
checks of jamb_env.engine.doors, one per option, called by every door)."""

from __future__ import annotations

import pytest

from jamb_env import RulesetError

PRESET = "classic_down"


def first_legal(obs, masks, views):
    return masks.argmax(axis=1)


first_legal.batched = True


def make(door: str, **kw):
    if door == "JambEnv":
        from jamb_env import JambEnv

        return JambEnv(**kw)
    if door == "JambVecEnv":
        from jamb_env import JambVecEnv

        return JambVecEnv(2, **kw)
    if door == "JambVectorEnv":
        from jamb_env.gym_vector import JambVectorEnv

        return JambVectorEnv(2, **kw)
    if door == "raw_env":
        from jamb_env.multiplayer import raw_env

        return raw_env(**kw)
    if door == "SeatEnv":
        from agents import load
        from jamb_env.multiplayer import SeatEnv

        return SeatEnv(load("greedy", ruleset=kw.get("ruleset", PRESET)), **kw)
    from jamb_env.multiplayer_vector import SeatVecEnv

    return SeatVecEnv(2, first_legal, **kw)


ALL = ("JambEnv", "JambVecEnv", "JambVectorEnv", "raw_env", "SeatEnv", "SeatVecEnv")
#: option -> (the doors that take it, bad values)
OPTIONS = {
    "illegal_action": (("JambEnv", "JambVecEnv", "JambVectorEnv", "SeatEnv", "SeatVecEnv"), ("ignore", None)),
    "reward_scale": (ALL, (0, -1.0, float("nan"), "1", True, 1e308)),  # 1e308: infinite rewards
    "render_mode": (("JambEnv", "JambVecEnv", "JambVectorEnv", "raw_env", "SeatEnv"), ("video", 1)),
    "mask_dtype": (("JambEnv", "JambVectorEnv"), ("uint8", "float32", 1, None)),
    "turn_features": (("JambEnv", "JambVecEnv", "JambVectorEnv"), ("yes", 1)),
    "mask_in_observation": (("JambEnv", "JambVectorEnv", "SeatEnv"), ("yes", 1, None)),
    "reward": (("raw_env", "SeatEnv", "SeatVecEnv"), ("points", None)),
    "autoreset_mode": (("JambVectorEnv",), ("never", 1)),
}
CASES = [(door, option, bad) for option, (doors, bads) in OPTIONS.items() for door in doors for bad in bads]


@pytest.mark.parametrize("door, option, bad", CASES)
def test_a_bad_option_is_a_value_error_naming_it(door, option, bad):
    with pytest.raises(ValueError, match=option) as caught:
        make(door, ruleset=PRESET, **{option: bad})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("door", ALL)
def test_an_unknown_ruleset_is_a_ruleset_error(door):
    with pytest.raises(RulesetError, match="unknown ruleset 'nope'"):
        make(door, ruleset="nope")


#: door -> the reset options it takes (None: any, unused)
RESET_OPTIONS = {"JambEnv": (), "JambVectorEnv": ("reset_mask",), "raw_env": None, "SeatEnv": ()}
#: (bad options, what the error says)
BAD_RESET_OPTIONS = [([1], "options must be a dict or None"), ({"reset_maks": None}, "unknown reset option")]


@pytest.mark.parametrize("door", RESET_OPTIONS)
@pytest.mark.parametrize("options, message", BAD_RESET_OPTIONS, ids=["a list", "a typo"])
def test_reset_refuses_options_it_does_not_take(door, options, message):
    """Before: a typo (``reset_maks``) reset every game of the vector env, and the other
    doors ignored any options, a list included."""
    env = make(door, ruleset=PRESET)
    if RESET_OPTIONS[door] is None and options != [1]:  # PettingZoo's AEC env takes any dict (its api_test gives one)
        env.reset(seed=0, options=options)
        return
    with pytest.raises(ValueError, match=message) as caught:
        env.reset(seed=0, options=options)
    assert "\n" not in str(caught.value)
    env.reset(seed=0, options={})
    env.reset(seed=0, options=None)
