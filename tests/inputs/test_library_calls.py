"""The library called from Python in odd but plausible ways: agents and envs of different
rulesets, finished games, calls before reset, values of the wrong type or shape at the
public doors. Each is a clear error naming what to do, never a traceback from inside or an
illegal action silently taken."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from jamb_env import JambEnv, JambVecEnv, load_ruleset
from tests.helpers import slow_after


def _finished(ruleset: str) -> JambEnv:
    env = JambEnv(ruleset=ruleset)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    return env


def test_vec_env_raise_mode_says_why():
    from jamb_env import IllegalActionError

    vec = JambVecEnv(2, "classic", seed=0, illegal_action="raise")
    vec.reset()
    actions = np.array([31, int(np.flatnonzero(vec.action_masks()[1])[0])])
    with pytest.raises(IllegalActionError, match="keeping every die is not a re-roll"):
        vec.step(actions)


def test_column_score_and_cell_name_check_ranges(classic):
    for cells in ({"ones": -5}, {"ones": 7}, {"full": 1}, {"max": 2**40}):
        with pytest.raises(ValueError, match="cannot be written"):
            classic.column_score(cells)
    with pytest.raises(ValueError, match="mapping"):
        classic.column_score([("ones", 1)])
    for cell in (-1, 52, 1.5, True):
        with pytest.raises(ValueError, match="cell index"):
            classic.cell_name(cell)


def test_core_rejects_float_and_bool_actions(classic):
    """(Float dice and a bool reward_scale: the tables of tests/inputs/test_numbers_at_every_door.py
    and test_options_at_every_door.py.)"""
    from jamb_env.rules import apply_action, decode, new_game, start_turn

    st = start_turn(classic, new_game(classic), [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="integer"):
        apply_action(classic, st, True)
    with pytest.raises(ValueError, match="integer"):
        decode(classic, 5.5)
    env = JambEnv()
    from jamb_env import Action

    with pytest.raises(ValueError, match="bools"):
        env.encode_action(Action("reroll", keep="10100"))
    assert JambEnv(reward_scale=np.float32(0.5)).reward_scale == 0.5


@pytest.mark.parametrize(
    "values, filled",
    [
        ([], (1 << 13) - 1),  # read past the end: a garbage score
        (np.zeros((13, 2), int), 1),  # numba's TypingError
        ([1.0] * 12 + [float("nan")], 1),
        (np.zeros(13, int), 1 << 80),  # an OverflowError
        (np.zeros(13, int), -1),
    ],
)
def test_column_parts_refuses_values_and_masks_of_the_wrong_shape(values, filled):
    rules = load_ruleset("classic")
    with pytest.raises(ValueError, match="values must be 13|filled must be a mask"):
        rules.column_parts(values, filled)
    with pytest.raises(ValueError, match="values must be 13|filled must be a mask"):
        rules.column_points(values, filled)
    assert rules.column_points(np.full(13, 3), (1 << 13) - 1) == rules.column_points([3] * 13, (1 << 13) - 1)


@pytest.mark.parametrize("fps", [0, -1, float("nan"), float("inf"), "2", True])
def test_write_video_refuses_a_frame_rate_that_is_not_a_positive_number(tmp_path, fps):
    pytest.importorskip("PIL")
    from jamb_env.replay.video import write_video

    frames = [np.zeros((8, 8, 3), dtype=np.uint8)] * 2
    with pytest.raises(ValueError, match="fps must be a positive finite number"):  # before: 0 a ZeroDivisionError
        write_video(tmp_path / "v.gif", frames, fps)
    assert not any(tmp_path.iterdir())
    assert write_video(tmp_path / "v.gif", frames, 2).is_file()


def test_write_video_refuses_a_gif_faster_than_its_frame_times_show(tmp_path):
    """A .gif's frame times are hundredths of a second, at least 20 ms in browsers: 60 fps was
    written as 50 without a word (the --fps of jamb-play says so before the game too)."""
    pytest.importorskip("PIL")
    from PIL import Image

    from jamb_env.replay.video import GIF_MAX_FPS, write_video

    frames = [np.zeros((8, 8, 3), dtype=np.uint8), np.full((8, 8, 3), 255, dtype=np.uint8)]
    with pytest.raises(ValueError, match=f"at most {GIF_MAX_FPS} frames a second"):
        write_video(tmp_path / "v.gif", frames, GIF_MAX_FPS + 10)
    assert not any(tmp_path.iterdir())
    with Image.open(write_video(tmp_path / "v.gif", frames, GIF_MAX_FPS)) as gif:
        assert gif.info["duration"] == 1000 / GIF_MAX_FPS


_PICTURE = np.zeros((8, 8, 3), dtype=np.uint8)


@pytest.mark.parametrize(
    "frames",
    [
        [_PICTURE, _PICTURE[:4]],  # before: written, PIL fitting the second picture into the first's size
        [_PICTURE.astype(float)],  # before: PIL's TypeError 'Cannot handle this data type'
        [_PICTURE[..., 0]],  # a grey picture, not (H, W, 3)
        [np.zeros((0, 0, 3), dtype=np.uint8)],  # before: 'max() arg is an empty sequence'
        _PICTURE,  # one array, not a list of them: before, NumPy's 'truth value of an array is ambiguous'
        [[[[0, 0, 0]]]],  # nested lists
    ],
)
def test_write_video_refuses_frames_that_are_not_pictures_of_one_size(tmp_path, frames):
    pytest.importorskip("PIL")
    from jamb_env.replay.video import write_video

    with pytest.raises(ValueError, match=r"frames must be|frame \d+"):
        write_video(tmp_path / "v.gif", frames, 2)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "name, solved_for, plays",
    slow_after(
        [
            # before: an illegal write (the game ends with -100 in 'terminate' mode)
            ("columnwise", "classic", "klasik"),
            ("columnwise", "classic", "six_dice"),  # before: a matmul ValueError (252 vs 462 dice multisets)
            ("optimal", "yu48_down", "classic_down"),  # before: an IndexError
            ("optimal", "classic_down", "classic_up"),  # before: an illegal write
        ],
        fast=["optimal"],  # columnwise solves classic first: seconds
    ),
)
def test_a_solver_agent_refuses_an_env_of_another_ruleset(name, solved_for, plays):
    agent = agents.load(name, ruleset=solved_for)
    env = JambEnv(ruleset=plays)
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=f"solved for ruleset '{solved_for}', the env plays '{plays}'"):
        agent.act(env, obs, env.action_masks())


@pytest.mark.parametrize(
    "name, ruleset", slow_after([("columnwise", "classic"), ("optimal", "yu48_down")], fast=["optimal"])
)  # columnwise solves classic first: seconds
def test_a_solver_agent_on_a_finished_game_says_the_game_is_over(name, ruleset):
    agent = agents.load(name, ruleset=ruleset)
    env = _finished(ruleset)  # before: IndexError: list index out of range
    with pytest.raises(ValueError, match="the game is over"):
        agent.act(env, env.observe(), env.action_masks())


def test_a_solver_agent_still_plays_its_own_ruleset():
    agent = agents.load("optimal", ruleset="classic_down")
    env = JambEnv(ruleset="classic_down", illegal_action="raise")
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(agent.act(env, obs, env.action_masks()))
    assert env.score > 0


@pytest.mark.parametrize(
    "name, ruleset", [("expectimax", "classic"), ("search", "classic_down"), ("optimal", "classic_down")]
)
def test_explain_on_a_finished_game_says_the_game_is_over(name, ruleset):
    agent = agents.load(name, ruleset=ruleset)
    with pytest.raises(ValueError, match="the game is over"):  # before: IndexError (expectimax, search)
        agent.explain(_finished(ruleset))


def test_seat_vec_env_refusing_an_illegal_action_keeps_its_games_playable():
    """illegal_action="raise": the error says the games are unchanged, and they are: the
    next legal step plays on (it said "call reset() first" before)."""
    from agents import load
    from jamb_env.multiplayer_vector import SeatVecEnv
    from jamb_env.utils.errors import IllegalActionError

    venv = SeatVecEnv(
        2, load("greedy", ruleset="classic_down"), ruleset="classic_down", num_players=2, illegal_action="raise", seed=0
    )
    venv.reset()
    masks = venv.action_masks()
    bad = np.array([int(np.flatnonzero(~m)[0]) if (~m).any() else 10**6 for m in masks])
    with pytest.raises(IllegalActionError, match="unchanged"):
        venv.step(bad)
    assert np.array_equal(venv.action_masks(), masks)
    venv.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))  # plays on


def test_seat_vec_env_with_an_agent_or_a_model_opponent_pickles():
    import pickle

    from agents import load
    from jamb_env.multiplayer_vector import SeatVecEnv

    venv = SeatVecEnv(2, load("greedy", ruleset="classic_down"), ruleset="classic_down", num_players=2, seed=0)
    venv.reset()
    again = pickle.loads(pickle.dumps(venv))
    assert np.array_equal(again.action_masks(), venv.action_masks())


def _aec(wrapped: bool):
    from jamb_env import multiplayer as mp

    return (mp.env if wrapped else mp.raw_env)(ruleset="classic_down", num_players=2)


def _legal_actions_env():
    from jamb_env.wrappers import LegalActions

    return LegalActions(JambEnv())


#: a call before reset -> (the env, the call, what the RuntimeError says, what the call gives after reset)
BEFORE_RESET = {
    "LegalActions.step": (_legal_actions_env, lambda e: e.step(0)[4]["played_action"] == 0, "reset"),  # not IndexError
    # its docstring says never all False; before reset it was (a sampler then draws from nothing)
    "JambEnv.action_masks": (JambEnv, lambda e: e.action_masks().any(), r"call reset\(\) first"),
    "raw_env.last": (lambda: _aec(False), lambda e: e.last() is not None, "reset"),
    "env.last": (lambda: _aec(True), lambda e: e.last() is not None, "reset"),
}


@pytest.mark.parametrize("door", BEFORE_RESET)
def test_a_call_before_reset_says_call_reset(door):
    make, call, says = BEFORE_RESET[door]
    env = make()
    with pytest.raises(RuntimeError, match=says):
        call(env)
    env.reset(seed=0)
    assert call(env)


@pytest.mark.parametrize("wrapped", [False, True])
def test_last_after_every_agent_left_is_a_clear_error(wrapped):
    env = _aec(wrapped)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(RuntimeError, match="every agent has left"):
        env.last()


@pytest.mark.parametrize("action", ["3", 3.0, None, [3], 10**30])
def test_the_wrapped_pettingzoo_env_refuses_an_action_that_is_no_action_and_plays_on(action):
    """Before: AssertOutOfBounds' AssertionError (not an integer), or its OverflowError (10**30)."""
    pytest.importorskip("pettingzoo")
    env = _aec(True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="an action is one integer|action 10+ is outside the action space"):
        env.step(action)
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))  # the game is unchanged and plays on


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"games": 0}, "games"),  # before: returned, having checked no game (a pass)
        ({"games": -1}, "games"),
        ({"games": 1.5}, "games"),
        ({"seed": -1}, "seed"),  # before: NumPy's "expected non-negative integer"
        ({"seed": True}, "seed"),
        ({"door": 42}, "door"),  # before: TypeError "'int' object is not callable"
    ],
)
def test_api_test_refuses_a_count_a_seed_or_a_door_that_checks_nothing(kw, words):
    from jamb_env.testing import api_test

    with pytest.raises(ValueError, match=words):
        api_test(**({"door": "JambEnv"} | kw))


@pytest.mark.parametrize("indices", [[5], 7, [True], [0, 2], [1.0]])
def test_the_sb3_vecenv_methods_refuse_a_game_index_outside_the_games(indices):
    vec = JambVecEnv(2, "classic", seed=0)
    vec.reset()
    for call in (
        lambda: vec.get_attr("num_envs", indices=indices),  # before: [2], the attribute of a game that is not there
        lambda: vec.env_is_wrapped(object, indices=indices),  # before: [False]
        lambda: vec.env_method("action_masks", indices=indices),  # before: NumPy's IndexError
    ):
        with pytest.raises(ValueError, match="indices"):
            call()
    assert vec.get_attr("num_envs", indices=[1, -1]) == [2, 2] and len(vec.env_method("action_masks", indices=1)) == 1
