"""JambEnv: Gymnasium API, checkers, masks, info, determinism, state round trip, errors."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

import jamb_env
from jamb_env import Action, IllegalActionError, JambEnv, RulesetError
from tests.helpers import playable_presets, random_legal


def test_spaces_classic():
    env = JambEnv()
    obs, info = env.reset(seed=0)
    assert env.action_space.n == 32 + 13 + 52
    assert obs.dtype == np.float32 and obs.shape == env.observation_space.shape
    assert env.observation_space.contains(obs)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.action_space.n,)
    assert info["action_mask"].dtype == np.int8 and (info["action_mask"] == mask).all()
    assert set(info) >= {"score", "dice", "roll", "announced", "turn", "action_mask"}
    assert info["roll"] == 1 and info["turn"] == 0 and info["score"] == 0 and info["announced"] == -1
    assert info["dice"].dtype == np.int8 and list(info["dice"]) == sorted(info["dice"]) and len(info["dice"]) == 5


def test_observation_layout_covers_the_vector():
    env = JambEnv()
    layout = env.observation_layout
    assert sum(size for _, size, _, _ in layout.values()) == env.observation_space.shape[0]
    starts = sorted(start for start, _, _, _ in layout.values())
    assert starts[0] == 0


@pytest.mark.parametrize("preset", playable_presets())
def test_gymnasium_env_checker(preset):
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unmasked random steps hit the illegal-action warning
        check_env(JambEnv(ruleset=preset), skip_render_check=True)


@pytest.mark.parametrize("preset", playable_presets())
def test_sb3_env_checker(preset):
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(JambEnv(ruleset=preset), warn=False)


def test_registered_with_gymnasium():
    env = gym.make("Jamb-v1", ruleset="classic")
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert jamb_env.ENV_ID in gym.registry


def test_same_seed_same_actions_same_game():
    a, b = JambEnv(), JambEnv()
    rng = np.random.default_rng(5)
    oa, ia = a.reset(seed=11)
    ob, ib = b.reset(seed=11)
    assert (oa == ob).all() and (ia["dice"] == ib["dice"]).all()
    done = False
    while not done:
        act = random_legal(a, rng)
        oa, ra, done, _, ia = a.step(act)
        ob, rb, done_b, _, ib = b.step(act)
        assert (oa == ob).all() and ra == rb and done == done_b and (ia["dice"] == ib["dice"]).all()


def test_different_seeds_differ():
    a = JambEnv()
    dice = {tuple(a.reset(seed=s)[1]["dice"]) for s in range(20)}
    assert len(dice) > 10


def test_dice_stream_is_shared_across_policies():
    """The k-th die rolled in a game is the k-th number of the seed's stream."""
    env = JambEnv()
    env.reset(seed=7)
    stream = env.get_state().stream
    assert tuple(sorted(stream[:5])) == tuple(env.reset(seed=7)[1]["dice"])
    # re-roll three dice: they are stream[5:8]
    mask = env.action_masks()
    keep_two = next(a for a in range(32) if mask[a] and bin(a).count("1") == 2)
    kept = [d for i, d in enumerate(env.game.dice) if keep_two >> i & 1]
    _, _, _, _, info = env.step(keep_two)
    assert tuple(info["dice"]) == tuple(sorted(kept + list(stream[5:8])))


def test_get_set_state_round_trip():
    env = JambEnv()
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    for _ in range(40):
        env.step(random_legal(env, rng))
    saved = env.get_state()
    obs_saved = env.observe()
    trace = []
    for _ in range(30):
        a = random_legal(env, rng)
        trace.append((a, *env.step(a)[:2]))
    env.set_state(saved)
    assert (env.observe() == obs_saved).all()
    for a, obs, reward in trace:
        o, r, *_ = env.step(a)
        assert (o == obs).all() and r == reward
    # mutating a returned copy does not touch the env
    state = env.get_state()
    state.game.values[:] = 99
    env.observe()[:] = 7.0
    env.action_masks()[:] = True
    assert (env.game.values != 99).all() and (env.observe() <= 1.0).all()
    assert env.action_masks().sum() < env.action_space.n


def test_illegal_action_terminate_mode():
    env = JambEnv()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.warns(UserWarning, match="illegal action"):
        obs, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and not truncated and info["illegal_action"]
    assert reward == JambEnv.ILLEGAL_ACTION_PENALTY
    assert env.observation_space.contains(obs)
    assert env.action_masks().all() and info["action_mask"].all()  # terminal masks are all ones
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_illegal_action_raise_mode_keeps_state():
    env = JambEnv(illegal_action="raise")
    env.reset(seed=0)
    before = env.get_state()
    illegal = int(np.flatnonzero(~env.action_masks())[-1])
    with pytest.raises(IllegalActionError, match=f"illegal action {illegal}"):
        env.step(illegal)
    after = env.get_state()
    assert (before.game.values == after.game.values).all() and before.position == after.position
    with pytest.raises(IllegalActionError, match="outside the action space"):
        env.step(env.action_space.n)
    with pytest.raises(ValueError, match="an action is one integer"):  # bad input: ValueError at every door
        env.step("write")
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # still playable


def test_bad_constructor_arguments():
    with pytest.raises(RulesetError, match="unknown ruleset"):
        JambEnv(ruleset="klassic")
    with pytest.raises(ValueError, match="illegal_action"):
        JambEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="reward_scale"):
        JambEnv(reward_scale=0)
    with pytest.raises(ValueError, match="render_mode"):
        JambEnv(render_mode="rgb")


def test_decode_encode_round_trip():
    env = JambEnv()
    for a in range(env.action_space.n):
        act = env.decode_action(a)
        assert isinstance(act, Action)
        assert env.encode_action(act) == a
        assert isinstance(env.action_to_string(a), str)
    assert env.decode_action(96) == Action("write", column="announce", row="jamb")
    assert env.decode_action(32) == Action("announce", column="announce", row="ones")
    assert env.decode_action(3).keep == (True, True, False, False, False)
    assert env.action_to_string(45) == "write down/ones"
    with pytest.raises(ValueError):
        env.decode_action(97)


def test_render_ansi_shows_the_sheet():
    env = JambEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    for word in ("down", "up", "free", "announce", "ones", "jamb", "bonus", "difference", "total", "score"):
        assert word in text
    env.step(int(np.flatnonzero(env.action_masks())[-1]))
    assert "score" in env.render()


def test_reward_scale():
    a, b = JambEnv(reward_scale=0.01), JambEnv()
    rng = np.random.default_rng(1)
    a.reset(seed=4)
    b.reset(seed=4)
    ra = rb = 0.0
    done = False
    while not done:
        act = random_legal(b, rng)
        ra += a.step(act)[1]
        _, r, done, _, info = b.step(act)
        rb += r
    assert rb == info["score"] and np.isclose(ra, rb * 0.01)
