"""JambVectorEnv: Gymnasium's VectorEnv over the batched engine: make_vec, seeding, both
autoreset modes, wrappers, the Dict observation, no aliasing, bad reset and step arguments
(its door contract: tests/conformance; the same games as JambEnv: the lockstep there)."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics
from packaging.version import Version

from jamb_env import JambEnv
from jamb_env.engine.seeding import game_seed
from jamb_env.gym_vector import JambVectorEnv
from jamb_env.rules import layout
from tests.helpers import random_actions

MODES = ["next_step", "same_step"]


def end_info(info, mode):
    """The end-of-game keys of a step's info (top level, or final_info in SAME_STEP)."""
    return info.get("final_info", {}) if mode == "same_step" else info


# ---------------------------------------------------------------------------- make_vec, spaces
@pytest.mark.parametrize("env_id, size", [("Jamb-v1", 590), ("Jamb-v0", 226)])
def test_make_vec_vector_entry_point(env_id, size):
    for mode in ("vector_entry_point", None):  # the default mode is the vector entry point
        vec = gym.make_vec(env_id, num_envs=8, vectorization_mode=mode)
        assert type(vec) is JambVectorEnv and vec.num_envs == 8
        assert vec.single_observation_space.shape == (size,) and vec.observation_space.shape == (8, size)
        assert vec.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        assert vec.spec.id == env_id
        obs, info = vec.reset(seed=0)
        assert obs.shape == (8, size) and obs.dtype == np.float32
        vec.close()
        assert vec.closed


def test_make_vec_passes_kwargs():
    vec = gym.make_vec(
        "Jamb-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        ruleset="classic_down",
        autoreset_mode="same_step",
        mask_in_observation=True,
        reward_scale=0.5,
        illegal_action="raise",
    )
    assert vec.ruleset.name == "classic_down" and not vec.turn_features and vec.reward_scale == 0.5
    assert vec.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP and vec.illegal_action == "raise"
    assert isinstance(vec.single_observation_space, gym.spaces.Dict)


@pytest.mark.parametrize("mode, cls", [("sync", SyncVectorEnv), ("async", AsyncVectorEnv)])
def test_make_vec_sync_and_async_still_build_jambenvs(mode, cls):
    vec = gym.make_vec("Jamb-v1", num_envs=2, vectorization_mode=mode)
    try:
        assert type(vec) is cls
        if mode == "sync":
            assert all(type(e.unwrapped) is JambEnv for e in vec.envs)
        obs, _ = vec.reset(seed=[5, 6])
        ref, _ = JambVectorEnv(2).reset(seed=[5, 6])
        assert (obs == ref).all()
    finally:
        vec.close()


# ---------------------------------------------------------------------------- seeding
def test_reset_seed_int_reproducible_and_derived():
    a, b = JambVectorEnv(4), JambVectorEnv(4)
    obs_a, _ = a.reset(seed=7)
    obs_b, _ = b.reset(seed=7)
    assert (obs_a == obs_b).all()
    assert (a._engine.games.stream == b._engine.games.stream).all()
    b.reset(seed=8)
    assert (a._engine.games.stream != b._engine.games.stream).any(axis=1).all()  # every game differs
    # game i is JambEnv's game of seed game_seed(7, i), as JambVecEnv(N, seed=7)
    env = JambEnv()
    for i in range(4):
        o, _ = env.reset(seed=game_seed(7, i))
        assert (obs_a[i] == o).all()
        assert (a._engine.games.stream[i] == env._engine.games.stream[0]).all()
    # unseeded resets: fresh entropy; a later reset continues each slot's generator
    c = JambVectorEnv(4)
    c.reset()
    first = c._engine.games.stream.copy()
    c.reset()
    assert (c._engine.games.stream != first).any(axis=1).all()
    a.reset()
    env.reset(seed=game_seed(7, 2))
    env.reset()
    assert (a._engine.games.stream[2] == env._engine.games.stream[0]).all()


# ---------------------------------------------------------------------------- full play
def torch_sampler(mask):
    logits = torch.where(torch.as_tensor(mask).bool(), 0.0, -torch.inf)
    return torch.distributions.Categorical(logits=logits).sample().numpy()


@pytest.fixture
def one_torch_thread():
    """Tiny tensors: torch's thread pool only costs time here."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("sampler", ["numpy", "torch"])
@pytest.mark.parametrize("mode", MODES)
def test_random_play_to_the_end(mode, sampler, one_torch_thread):
    """Several games per slot: the episode return equals the score, each game ends exactly
    once after its last write, the step after an end (NEXT_STEP) is the new game's start,
    handed-out masks are never all False; actions are checked (illegal_action="raise")."""
    N = 8
    vec = JambVectorEnv(N, autoreset_mode=mode, illegal_action="raise")
    write_offset, cells = layout(vec.ruleset).write_offset, vec.ruleset.num_cells
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    obs, info = vec.reset(seed=3)
    returns, writes, ended = np.zeros(N), np.zeros(N, dtype=int), np.zeros(N, dtype=int)
    over = np.zeros(N, dtype=bool)
    steps = 0
    while ended.min() < 2:
        steps += 1
        assert steps < 3000
        mask = info["action_mask"]
        assert mask.any(axis=1).all()
        assert not mask[over].any() or mask[over].all()  # over: all ones
        actions = torch_sampler(mask) if sampler == "torch" else random_actions(rng, mask)
        if sampler == "numpy":
            actions[over] = -1  # ignored for a game that is over
        obs, rew, term, trunc, info = vec.step(actions)
        assert not trunc.any()
        assert (rew[over] == 0).all() and not term[over].any()
        live = ~over
        returns[live] += rew[live]
        writes[live] += actions[live] >= write_offset
        fin = end_info(info, mode)
        for i in np.flatnonzero(term):
            assert writes[i] == cells  # ends after its last write, not before
            assert fin["_score"][i] and returns[i] == fin["score"][i]
            assert returns[i] == sum(fin["column_scores"][c][i] for c in vec.ruleset.columns)
            assert info["action_mask"][i].all() if mode == "next_step" else not info["action_mask"][i].all()
        assert (writes[~term] < cells).all()  # no game writes its last cell without ending
        assert ("score_parts" in fin) == term.any() and (fin.get("_score_parts", term) == term).all()
        ended += term
        returns[term], writes[term] = 0, 0
        over = term if mode == "next_step" else np.zeros(N, dtype=bool)
    assert steps > 2 * cells


# ---------------------------------------------------------------------------- wrappers
@pytest.mark.parametrize("mode", MODES)
def test_record_episode_statistics(mode):
    if mode == "same_step" and Version(gym.__version__) < Version("1.3"):
        pytest.skip(
            f"gymnasium {gym.__version__} (pinned by ray[rllib]): its RecordEpisodeStatistics counts "
            "episode lengths for next_step autoreset only"
        )
    vec = RecordEpisodeStatistics(JambVectorEnv(4, autoreset_mode=mode))
    obs, info = vec.reset(seed=2)
    rng = np.random.default_rng(2)
    lengths, seen = np.zeros(4, dtype=int), 0
    for _ in range(400):
        obs, rew, term, trunc, info = vec.step(random_actions(rng, info["action_mask"]))
        lengths += 1
        for i in np.flatnonzero(term):
            assert info["_episode"][i] and info["episode"]["r"][i] == end_info(info, mode)["score"][i]
            assert info["episode"]["l"][i] == lengths[i]
            seen += 1
        if mode == "next_step":
            lengths[term] = -1  # the reset step does not count
        else:
            lengths[term] = 0
    assert seen >= 4


def test_normalize_observation():
    vec = NormalizeObservation(JambVectorEnv(4))
    obs, info = vec.reset(seed=4)
    rng = np.random.default_rng(4)
    first = obs.copy()
    for _ in range(5):
        obs, rew, term, trunc, info = vec.step(random_actions(rng, info["action_mask"]))
        assert obs.shape == (4, 590) and np.isfinite(obs).all()
    assert not np.allclose(obs, first)
    assert vec.obs_rms.count > 4
    # Gymnasium's own rule for this wrapper (an AssertionError before gymnasium 1.3)
    with pytest.raises((ValueError, AssertionError)):
        NormalizeObservation(JambVectorEnv(4, autoreset_mode="same_step"))


# ---------------------------------------------------------------------------- Dict observation
@pytest.mark.parametrize("mode", MODES)
def test_mask_in_observation(mode):
    vec = JambVectorEnv(4, autoreset_mode=mode, mask_in_observation=True)
    box = JambVectorEnv(4, autoreset_mode=mode)
    space = vec.single_observation_space
    assert space == gym.spaces.Dict(
        {"observation": box.single_observation_space, "action_mask": gym.spaces.MultiBinary(97)}
    )
    obs, info = vec.reset(seed=9)
    ref, _ = box.reset(seed=9)
    rng = np.random.default_rng(9)
    ends = 0
    for _ in range(300):
        assert vec.observation_space.contains(obs)
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        assert (obs["observation"] == ref).all() and (obs["action_mask"] == info["action_mask"]).all()
        assert not np.shares_memory(obs["action_mask"], info["action_mask"])
        for i in range(4):
            assert space.contains({"observation": obs["observation"][i], "action_mask": obs["action_mask"][i]})
        actions = random_actions(rng, obs["action_mask"])
        obs, _, term, _, info = vec.step(actions)
        ref, *_ = box.step(actions)
        for i in np.flatnonzero(term):
            ends += 1
            if mode == "same_step":
                final = info["final_obs"][i]
                assert space.contains(final) and final["action_mask"].all()
            else:
                assert obs["action_mask"][i].all()
    assert ends >= 2


# ---------------------------------------------------------------------------- no aliasing
@pytest.mark.parametrize("mode", MODES)
def test_returned_arrays_do_not_alias(mode):
    """Mutating everything handed out changes nothing; nothing handed out is written later."""
    a, b = JambVectorEnv(4, autoreset_mode=mode), JambVectorEnv(4, autoreset_mode=mode)
    obs_a, info_a = a.reset(seed=5)
    obs_b, info_b = b.reset(seed=5)
    rng = np.random.default_rng(5)
    kept = []
    for _ in range(300):
        actions = random_actions(rng, info_b["action_mask"])
        kept.append((obs_b, obs_b.copy(), info_b["action_mask"], info_b["action_mask"].copy()))
        obs_a[:] = -1.0
        info_a["action_mask"][:] = 0
        out_a = a.step(actions)
        out_b = b.step(actions)
        for x, y in zip(out_a[:4], out_b[:4]):
            assert (x == y).all()
            x[...] = 0  # mutate the rewards and flags too
        assert (out_a[4]["action_mask"] == out_b[4]["action_mask"]).all()
        obs_a, info_a, obs_b, info_b = out_a[0], out_a[4], out_b[0], out_b[4]
        assert not np.shares_memory(obs_b, kept[-1][0]) and not np.shares_memory(info_b["action_mask"], kept[-1][2])
    for obs, obs_copy, mask, mask_copy in kept:
        assert (obs == obs_copy).all() and (mask == mask_copy).all()


# ---------------------------------------------------------------------------- illegal actions
# ---------------------------------------------------------------------------- bad arguments
def test_autoreset_mode_spellings():
    for spelling in ("next_step", "NextStep", "NEXT_STEP", AutoresetMode.NEXT_STEP):
        assert JambVectorEnv(1, autoreset_mode=spelling).metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    for spelling in ("same_step", "SameStep", AutoresetMode.SAME_STEP):
        assert JambVectorEnv(1, autoreset_mode=spelling).autoreset_mode is AutoresetMode.SAME_STEP


def test_bad_reset_and_step_arguments():
    vec = JambVectorEnv(3)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros(3, dtype=np.int64))
    for seed in (-1, "1", 1.5, True, [1, 2], [1, 2, -3], [1, 2, 3, 4]):
        with pytest.raises(ValueError, match="seed must be None, a non-negative integer or a list of 3"):
            vec.reset(seed=seed)
    with pytest.raises(RuntimeError, match=r"reset\(\) \(every game\) before a reset with options\['reset_mask'\]"):
        vec.reset(options={"reset_mask": np.ones(3, dtype=bool)})
    with pytest.raises(ValueError, match="options must be a dict"):
        vec.reset(options=[1])
    _, info = vec.reset(seed=np.array([1, 2, 3]))
    legal = random_actions(np.random.default_rng(0), info["action_mask"])
    for actions in (legal[:2], np.append(legal, 0), legal[:, None]):
        with pytest.raises(ValueError, match=r"expected 3 actions \(shape \(3,\)\)"):
            vec.step(actions)
    for actions in (legal.astype(np.float32), legal.astype(bool), ["a", "b", "c"]):
        with pytest.raises(ValueError, match="actions must be integers"):
            vec.step(actions)
    obs, *_ = vec.step(list(legal))  # a list of ints is fine
    assert obs.shape == (3, 590)
