"""JambEnv beyond the door contract (tests/conformance: spaces, masks, info, seeding, illegal
actions; tests/inputs: bad arguments): the observation layout, state round trip, actions,
rendering, reward scale."""

import numpy as np
import pytest

from jamb_env import Action, JambEnv
from tests.helpers import random_legal


def test_observation_layout_covers_the_vector():
    env = JambEnv()
    layout = env.observation_layout
    assert sum(size for _, size, _, _ in layout.values()) == env.observation_space.shape[0]
    starts = sorted(start for start, _, _, _ in layout.values())
    assert starts[0] == 0


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


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_a_copied_env_plays_on_alone(how):
    """Before: ``copy.copy`` shared the game's arrays but not the ``done`` flag; once the copy
    had finished, the original handed out an all-False mask mid-game."""
    import copy

    env = JambEnv("classic_down")
    env.reset(seed=3)
    twin = getattr(copy, how)(env)
    before = env.observe().copy()
    done = False
    while not done:
        _, _, done, _, _ = twin.step(int(twin.action_masks().argmax()))
    assert np.array_equal(env.observe(), before) and env.action_masks().any()
