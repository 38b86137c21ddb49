"""Contract table: every API that takes a die, an action, a seed, a count, a seat or a
player, at every door, refuses a bool, a float and an out-of-range value with one clear
line and the same exception type (ValueError; IllegalActionError, a ValueError, for an
integer action outside the action space), and nothing changes (jamb_env.engine.doors)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from jamb_env import IllegalActionError, JambEnv, JambVecEnv
from jamb_env import rules as core
from jamb_env.gym_vector import JambVectorEnv

PRESET = "classic_down"
BOOL, FLOAT = True, 1.5


def first_legal(obs, masks, views):
    return masks.argmax(axis=1)


first_legal.batched = True


def env():
    e = JambEnv(PRESET, illegal_action="raise")
    e.reset(seed=0)
    return e


def vec():
    v = JambVecEnv(2, PRESET, seed=0, illegal_action="raise")
    v.reset()
    return v


def gvec():
    v = JambVectorEnv(2, PRESET, illegal_action="raise")
    v.reset(seed=0)
    return v


def raw_env(*args):
    from jamb_env import multiplayer

    return multiplayer.raw_env(PRESET, *args)


def seat_vec(**kw):
    from jamb_env.multiplayer_vector import SeatVecEnv

    return SeatVecEnv(2, first_legal, ruleset=PRESET, **kw)


def aec():
    from jamb_env import multiplayer

    e = multiplayer.env(ruleset=PRESET, num_players=2)
    e.reset(seed=0)
    return e


def seat_env(**kw):
    from agents import load
    from jamb_env import multiplayer

    return multiplayer.SeatEnv(load("greedy", ruleset=PRESET), ruleset=PRESET, **kw)


def reroll(e):
    return int(np.flatnonzero(e.action_masks()[:31])[0])  # a legal re-roll (keep-masks come first)


def dice(bad):
    return [bad, 2, 3, 4, 5] if bad is not None else [7, 2, 3, 4, 5]


def position(e, bad):
    state = e.get_state()
    return replace(state, position=bad if bad is not None else 10**6)


OUT = None  # the out-of-range value of each row, chosen by the row
#: (door and API, call(bad), out-of-range value)
TABLE = {
    "JambEnv.step action": (lambda b: env().step(b), 10**6),
    "JambEnv.step_outcome dice": (lambda b: (e := env()).step_outcome(reroll(e), dice(b)), OUT),
    "JambEnv.step_outcome action": (lambda b: env().step_outcome(b, [1, 2, 3, 4, 5]), -1),
    "JambEnv.chance_outcomes action": (lambda b: env().chance_outcomes(b), 10**6),
    "JambEnv.set_state position": (lambda b: (e := env()).set_state(position(e, b)), OUT),
    "JambEnv.reset seed": (lambda b: JambEnv(PRESET).reset(seed=b), -1),
    "JambVecEnv num_envs": (lambda b: JambVecEnv(b, PRESET), 0),
    "JambVecEnv seed": (lambda b: JambVecEnv(2, PRESET, seed=b), -1),
    "JambVecEnv game_seeds": (lambda b: JambVecEnv(2, PRESET, game_seeds=[b, 1]), -1),
    "JambVecEnv.step actions": (lambda b: vec().step(np.full(2, b)), 10**6),
    "JambVectorEnv num_envs": (lambda b: JambVectorEnv(b, PRESET), 0),
    "JambVectorEnv.reset seed": (lambda b: JambVectorEnv(2, PRESET).reset(seed=b), -1),
    "JambVectorEnv.reset seeds": (lambda b: JambVectorEnv(2, PRESET).reset(seed=[b, 1]), -1),
    "JambVectorEnv.step actions": (lambda b: gvec().step(np.full(2, b)), 10**6),
    "SeatVecEnv num_envs": (lambda b: _seat_vec_n(b), 0),
    "SeatVecEnv seed": (lambda b: seat_vec(seed=b), -1),
    "SeatVecEnv seat": (lambda b: seat_vec(seat=b), 2),
    "SeatVecEnv.step actions": (lambda b: _seat_vec_step(b), 10**6),
    "raw_env num_players": (lambda b: raw_env(b), 6),
    "raw_env.reset seed": (lambda b: raw_env().reset(seed=b), -1),
    "AEC env.step action": (lambda b: aec().step(b), 10**30),
    "SeatEnv seat": (lambda b: seat_env(seat=b), 2),
    "SeatEnv.reset seed": (lambda b: seat_env().reset(seed=b), -1),
    "SeatEnv.step action": (lambda b: _seat_env_step(b), 10**6),
    "rules.start_turn dice": (lambda b: core.start_turn(core.load_ruleset(PRESET), _empty(), dice(b)), OUT),
    "rules.apply_outcome dice": (lambda b: _core_outcome(b), OUT),
    "agents.load random seed": (lambda b: _agent_seed(b), -1),
}


def _seat_vec_n(b):
    from jamb_env.multiplayer_vector import SeatVecEnv

    return SeatVecEnv(b, first_legal, ruleset=PRESET)


def _seat_vec_step(b):
    v = seat_vec(seed=0, illegal_action="raise")
    v.reset()
    return v.step(np.full(2, b))


def _seat_env_step(b):
    e = seat_env(seat=0, illegal_action="raise")
    e.reset(seed=0)
    return e.step(b)


def _agent_seed(b):
    from agents import load

    return load("random", ruleset=PRESET, seed=b)


def _empty():
    return core.new_game(core.load_ruleset(PRESET))


def _core_outcome(b):
    rules = core.load_ruleset(PRESET)
    st = core.start_turn(rules, _empty(), [1, 2, 3, 4, 5])
    return core.apply_outcome(rules, st, 0, dice(b))


CASES = [(name, kind) for name in TABLE for kind in ("bool", "float", "out of range")]


@pytest.mark.parametrize("name, kind", CASES, ids=[f"{n} x {k}" for n, k in CASES])
def test_a_bool_a_float_and_an_out_of_range_value_are_refused_in_one_line(name, kind):
    call, out_of_range = TABLE[name]
    bad = {"bool": BOOL, "float": FLOAT, "out of range": out_of_range}[kind]
    with pytest.raises(ValueError) as caught:  # IllegalActionError is a ValueError
        call(bad)
    message = str(caught.value)
    assert message and "\n" not in message, message
    if kind == "out of range" and "action" in name and "outcome" not in name:
        assert isinstance(caught.value, IllegalActionError), (name, message)


#: the forms of one integer action every door takes (jamb_env.engine.doors.check_action)
ONE_ACTION = {"NumPy integer": np.int64, "0-d array": np.array, "one-element array": lambda a: np.array([a])}
#: door -> (a started env, its first legal action)
STEPPERS = {
    "JambEnv.step": (env, lambda e: int(e.action_masks().argmax())),
    "AEC env.step": (aec, lambda e: int(e.last()[0]["action_mask"].argmax())),
    "SeatEnv.step": (
        lambda: _started(seat_env(seat=0, illegal_action="raise")),
        lambda e: int(e.action_masks().argmax()),
    ),
}


def _started(e):
    e.reset(seed=0)
    return e


@pytest.mark.parametrize("form", ONE_ACTION)
@pytest.mark.parametrize("door", STEPPERS)
def test_every_form_of_one_integer_action_is_taken_at_every_door(door, form):
    make, legal = STEPPERS[door]
    e = make()
    e.step(ONE_ACTION[form](legal(e)))  # was an AssertionError at the AEC door for a one-element array


@pytest.mark.parametrize("bad", [BOOL, FLOAT, -1])
def test_openspiel_refuses_the_same_class(bad):
    pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed: the openspiel extra")
    import jamb_env.openspiel  # noqa: F401  (registers python_jamb)

    game = pyspiel.load_game("python_jamb", {"ruleset": PRESET, "players": 2})
    state = game.new_initial_state()
    for name in ("apply_action", "observation_tensor", "legal_actions", "player_return"):
        with pytest.raises(ValueError):  # -1 is the chance player for legal_actions: 9 is out of range there
            getattr(state, name)(9 if name == "legal_actions" and bad == -1 else bad)
    with pytest.raises(ValueError, match="player"):  # was the text of action 0 for any player (9, True)
        state.action_to_string(9 if bad == -1 else bad, 0)
    # a parameter of the wrong type is refused by pyspiel's typed parameters (SpielError) before the game
    with pytest.raises((ValueError, pyspiel.SpielError), match="players"):
        pyspiel.load_game("python_jamb", {"players": bad if bad != -1 else 9})
    assert state.history() == []  # nothing changed
