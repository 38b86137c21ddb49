"""JambVecEnv: the invariants over many games, the SB3 hooks, seeds, no aliasing, the threaded
kernel (its door contract and the same games as JambEnv: tests/conformance)."""

import numpy as np
import pytest

from jamb_env import IllegalActionError, JambEnv, JambVecEnv
from jamb_env.engine.seeding import game_seeds
from tests.helpers import playable_presets, random_actions, slow_after

PRESETS = playable_presets()


@pytest.mark.parametrize("preset", slow_after(PRESETS))  # 2,000 games a preset: classic in the fast suite
def test_many_games_invariants_fast(preset):
    """2,000 games per preset on the batched env alone: no dead end, return == score."""
    N = 256
    vec = JambVecEnv(N, preset, seed=1)
    vec.reset()
    rng = np.random.default_rng(3)
    returns = np.zeros(N)
    games = 0
    while games < 2000:
        masks = vec.action_masks()
        assert masks.any(axis=1).all()
        obs, rew, done, infos = vec.step(random_actions(rng, masks))
        returns += rew
        for i in np.flatnonzero(done):
            assert returns[i] == infos[i]["score"] == sum(infos[i]["column_scores"].values())
            parts = infos[i]["score_parts"]
            assert infos[i]["score"] == parts["upper"] + parts["bonus"] + parts["difference"] + parts["lower"]
            returns[i] = 0
            games += 1
    assert (obs >= vec.observation_space.low).all() and (obs <= vec.observation_space.high).all()


def test_sb3_hooks_and_state_arrays():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    vec = JambVecEnv(3, "standard", seed=0)
    vec.reset()
    assert is_masking_supported(vec)
    assert get_action_masks(vec).shape == (3, vec.action_space.n)
    assert vec.get_attr("render_mode") == [None, None, None]
    assert vec.env_is_wrapped(object) == [False] * 3
    assert vec.values.shape == (3, 8, 13) and vec.dice.shape == (3, 5) and (vec.roll == 1).all()
    assert (vec.score == 0).all() and (vec.turn == 0).all()
    with pytest.raises(AttributeError):
        vec.env_method("render")


def test_returned_arrays_are_not_overwritten():
    vec = JambVecEnv(8, "classic", seed=0)
    obs0 = vec.reset()
    keep = obs0.copy()
    mask0 = vec.action_masks()
    keep_mask = mask0.copy()
    vec.step(random_actions(np.random.default_rng(0), mask0))
    assert (obs0 == keep).all() and (mask0 == keep_mask).all()


def test_seeds_share_no_game():
    """Runs seeded 0..9 (16 games each) and their fine-tuning stage share no dice stream;
    explicit game_seeds replay JambEnv.reset(seed=...) games."""
    from jamb_env.engine.seeding import STAGE_FINETUNE

    streams = []
    for seed in range(10):
        vec = JambVecEnv(16, "classic", seed=seed)
        vec.reset()
        streams += [bytes(row) for row in vec.stream]
    for seed in range(10):
        vec = JambVecEnv(16, "classic", game_seeds=game_seeds(seed, 16, STAGE_FINETUNE))
        vec.reset()
        streams += [bytes(row) for row in vec.stream]
    assert len(set(streams)) == len(streams) == 320
    vec = JambVecEnv(2, "classic", game_seeds=[20_000_000, 20_000_001])
    env = JambEnv("classic")
    assert (vec.reset()[1] == env.reset(seed=20_000_001)[0]).all()
    with pytest.raises(ValueError, match="not both"):
        JambVecEnv(2, seed=0, game_seeds=[1, 2])
    with pytest.raises(ValueError, match="one per game"):
        JambVecEnv(2, game_seeds=[1])


def test_returned_arrays_do_not_alias_the_games():
    """Writing into anything JambVecEnv or JambEnv hands out changes neither what is legal
    nor what the games hold (issue: no aliasing of internal state)."""
    vec = JambVecEnv(4, "classic", seed=0, illegal_action="raise")
    obs = vec.reset()
    legal = vec.action_masks()
    masks = vec.action_masks()
    masks[:] = True
    obs[:] = 5.0
    assert (vec.action_masks() == legal).all() and not legal.all()
    for name in ("values", "filled", "dice", "roll", "turn", "score", "stream", "pos"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(vec, name)[0] = 1
    illegal = np.flatnonzero(~legal[0])[0]
    with pytest.raises(IllegalActionError):
        vec.step(np.array([illegal] + [int(np.flatnonzero(legal[i])[0]) for i in range(1, 4)]))

    env = JambEnv("classic")
    obs, info = env.reset(seed=0)
    before = env.get_state()
    obs[:] = 5.0
    info["action_mask"][:] = 1
    env.action_masks()[:] = True
    env.game.values[:] = 9
    after = env.get_state()
    assert (after.game.values == before.game.values).all() and not env.action_masks().all()
    assert (env.observe() <= 1.0).all()


def test_parallel_and_serial_steps_play_the_same_games():
    """The threaded kernel (from PARALLEL_FROM games on) plays exactly as the serial one,
    and the games advance (a kernel that leaves the state alone fails here, not by hanging
    the invariant test)."""
    envs = [JambVecEnv(300, "classic", seed=4) for _ in range(2)]
    envs[1].parallel = not envs[0].parallel
    rng = np.random.default_rng(0)
    for env in envs:
        env.reset()
    for _ in range(60):
        actions = random_actions(rng, envs[0].action_masks())
        out = [env.step(actions) for env in envs]
        assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    assert np.array_equal(envs[0].values, envs[1].values) and envs[0].turn.min() >= 5
