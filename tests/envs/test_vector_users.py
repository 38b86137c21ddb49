"""Vector users: what Gymnasium's vector API promises, in every vectorization mode, and
the TorchRL and Tianshou recipes (docs/tools.md).

* every info key batches into a numeric array of a fixed dtype (sync, async and the
  vector entry point alike): ``dice`` int8 (N, n), ``announced`` a cell index;
* the default ``make_vec`` env (JambVectorEnv) hands out exactly what Gymnasium's
  ``SyncVectorEnv`` of JambEnvs does, in every autoreset mode (DISABLED and
  ``reset_mask`` included), and has ``call`` / ``get_attr`` and ``render``;
* ``autoreset_mode`` is taken the same way in every mode (``jamb_env.gym_vector.make_vec``),
  and a clear error where Gymnasium hands it to JambEnv;
* ``mask_dtype="bool"``: masks that ``torch.masked_fill`` / TorchRL take, with Gymnasium's
  and SB3's checkers and MaskablePPO's ``MultiInputPolicy``;
* TorchRL (``GymEnv``, ``GymEnv(num_envs=2)``, ``GymWrapper`` over the batched env) and
  Tianshou (DQN's masked Q-values) play legal games whose returns are the scores.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from jamb_env import JambEnv, load_ruleset
from jamb_env.engine.seeding import game_seed
from jamb_env.gym_vector import JambVectorEnv, make_vec
from jamb_env.rules import layout
from tests.helpers import random_actions

MODES = list(AutoresetMode)


def leaves(tree, path="info"):
    """``(path, value)`` of every leaf of a (nested) info dict."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from leaves(value, f"{path}[{key!r}]")
        else:
            yield f"{path}[{key!r}]", value


def rows(tree, mask):
    """The rows ``mask`` of every leaf of a (nested) info dict."""
    return {k: rows(v, mask) if isinstance(v, dict) else v[mask] for k, v in tree.items()}


def play(vec, rng, info, steps):
    """``steps`` masked random steps of a gymnasium vector env (no DISABLED resets);
    returns the infos of the steps."""
    out = []
    for _ in range(steps):
        *_, info = vec.step(random_actions(rng, info["action_mask"]))
        out.append(info)
    return out


# ---------------------------------------------------------------------------- info: numeric in every mode
@pytest.mark.parametrize("vectorization_mode", ["sync", "async", "vector_entry_point"])
def test_every_info_key_is_a_numeric_array_in_every_vectorization_mode(vectorization_mode):
    """No object arrays (a tuple of dice, None for no announcement) whatever vectorizes
    the env; each key has JambEnv's dtype; the end-of-game keys too."""
    vec = gym.make_vec("Jamb-v1", num_envs=2, vectorization_mode=vectorization_mode)
    try:
        _, info = vec.reset(seed=[1, 2])
        infos = [info] + play(vec, np.random.default_rng(1), info, 170)  # both games end (each under 160 steps)
    finally:
        vec.close()
    ended = [i for i in infos if "score_parts" in i]
    assert ended, "no game ended"
    for info in (infos[0], ended[0]):
        assert set(info) >= {"score", "dice", "roll", "announced", "turn", "action_mask"}
        for path, value in leaves(info):
            assert isinstance(value, np.ndarray) and value.dtype != object and len(value) == 2, path
        assert info["dice"].dtype == np.int8 and info["dice"].shape == (2, 5)
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (2, 97)
        for key in ("score", "roll", "announced", "turn"):
            assert info[key].dtype == np.int64, key
        assert (
            all(v.dtype == np.int64 for p, v in leaves(info["score_parts"]) if "'_" not in p)
            if "score_parts" in info
            else True
        )
    assert (infos[0]["announced"] == -1).all() and (infos[0]["roll"] == 1).all()


def test_info_of_one_game():
    """dice int8 (n,) sorted, zeros once no dice are rolled; announced a cell index (-1
    for none) that ``ruleset.cell_name`` reads back."""
    env = JambEnv()
    rules = env.ruleset
    _, info = env.reset(seed=4)
    assert info["dice"].dtype == np.int8 and info["dice"].shape == (5,) and (np.diff(info["dice"]) >= 0).all()
    assert info["announced"] == -1 and isinstance(info["announced"], int)
    announce = [a for a in np.flatnonzero(env.action_masks()) if env.decode_action(int(a)).kind == "announce"]
    action = env.decode_action(int(announce[0]))
    _, _, _, _, info = env.step(int(announce[0]))
    assert info["announced"] == rules.cell(action.column, action.row)
    assert rules.cell_name(info["announced"]) == (action.column, action.row)
    rng = np.random.default_rng(4)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert info["dice"].shape == (5,) and info["dice"].dtype == np.int8
    assert info["roll"] == 0 and not info["dice"].any() and info["announced"] == -1


# ---------------------------------------------------------------------------- the default vector env = SyncVectorEnv
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"mask_in_observation": True}, {"mask_in_observation": True, "mask_dtype": "bool"}],
    ids=["box", "dict", "dict-bool"],
)
def test_default_vector_env_hands_out_what_sync_does(mode, kwargs):
    """Same seeds, same actions (one of them illegal): the batched env's obs, rewards, flags
    and info equal Gymnasium's SyncVectorEnv over JambEnvs exactly (dtypes and shapes
    included), in every autoreset mode; with DISABLED the finished games are restarted
    with ``reset_mask``, where sync's info has the restarted games only and ours every
    game (the others' rows being their current state)."""
    N, seeds = 2, [3, 4]
    ours = gym.make_vec("Jamb-v1", num_envs=N, autoreset_mode=mode, **kwargs)
    sync = gym.make_vec(
        "Jamb-v1", num_envs=N, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs
    )
    assert type(ours.unwrapped) is JambVectorEnv and isinstance(sync, SyncVectorEnv)
    assert (
        ours.single_observation_space == sync.single_observation_space
        and ours.observation_space == sync.observation_space
    )
    out, ref = ours.reset(seed=seeds), sync.reset(seed=seeds)
    assert data_equivalence(out, ref, exact=True)
    rng = np.random.default_rng(0)
    info, ends = out[1], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the illegal action's warning
        for t in range(330):
            actions = random_actions(rng, info["action_mask"])
            if t == 5:
                actions[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])  # illegal: that game ends
            out, ref = ours.step(actions), sync.step(actions)
            assert data_equivalence(out, ref, exact=True), f"step {t}"
            info, terminated = out[4], out[2]
            ends += int(terminated.sum())
            if mode == AutoresetMode.DISABLED and terminated.any():
                (obs, info), (ref_obs, ref_info) = (
                    ours.reset(options={"reset_mask": terminated}),
                    sync.reset(options={"reset_mask": terminated.copy()}),
                )
                assert data_equivalence(obs, ref_obs, exact=True)
                assert data_equivalence(rows(info, terminated), rows(ref_info, terminated), exact=True)
                assert all(v.all() for p, v in leaves(info) if p.endswith("'_action_mask']"))
    assert ends >= 3  # the illegal end and at least two full games
    ours.close(), sync.close()


def test_async_matches_the_default_vector_env():
    ours = gym.make_vec("Jamb-v1", num_envs=2)
    other = gym.make_vec("Jamb-v1", num_envs=2, vectorization_mode="async")
    try:
        out, ref = ours.reset(seed=[7, 8]), other.reset(seed=[7, 8])
        assert data_equivalence(out, ref, exact=True)
        rng = np.random.default_rng(7)
        for _ in range(20):
            actions = random_actions(rng, out[-1]["action_mask"])
            out, ref = ours.step(actions), other.step(actions)
            assert data_equivalence(out, ref, exact=True)
    finally:
        other.close()


# ---------------------------------------------------------------------------- DISABLED and reset_mask
def test_disabled_autoreset_and_reset_mask():
    N, seed = 3, 5
    vec = JambVectorEnv(N, autoreset_mode="disabled", illegal_action="raise")
    assert vec.metadata["autoreset_mode"] is AutoresetMode.DISABLED
    singles = [JambEnv() for _ in range(N)]
    obs, info = vec.reset(seed=seed)
    for i, env in enumerate(singles):
        assert (env.reset(seed=game_seed(seed, i))[0] == obs[i]).all()
    rng = np.random.default_rng(5)
    terminated = np.zeros(N, dtype=bool)
    while not terminated.any():
        actions = random_actions(rng, info["action_mask"])
        obs, _, terminated, _, info = vec.step(actions)
        for i, env in enumerate(singles):
            assert (env.step(int(actions[i]))[0] == obs[i]).all()
    assert info["action_mask"][terminated].all()  # over: all ones, until its reset
    before = vec.call("get_state")
    with pytest.raises(RuntimeError, match=r"games \[\d\] are over \(autoreset_mode=DISABLED\).*reset_mask"):
        vec.step(random_actions(rng, info["action_mask"]))
    after = vec.call("get_state")
    assert all(
        (a.stream == b.stream).all() and a.position == b.position and a.done == b.done for a, b in zip(before, after)
    )
    obs2, info2 = vec.reset(options={"reset_mask": terminated})
    for i, env in enumerate(singles):
        if terminated[i]:  # a new game from the slot's own generator, as JambEnv.reset()
            assert (env.reset()[0] == obs2[i]).all() and info2["turn"][i] == 0
        else:  # untouched
            assert (obs2[i] == obs[i]).all() and (info2["action_mask"][i] == info["action_mask"][i]).all()
    assert info2["_score"].all() and not np.shares_memory(obs2, obs)
    vec.step(random_actions(rng, info2["action_mask"]))  # every game plays again
    # seeds with a reset_mask: only the games reset are seeded
    only = np.array([False, True, False])
    obs3, _ = vec.reset(seed=11, options={"reset_mask": only})
    assert (obs3[1] == JambEnv().reset(seed=game_seed(11, 1))[0]).all()
    obs4, _ = vec.reset(seed=[0, 0, 12], options={"reset_mask": np.array([False, False, True])})
    assert (obs4[2] == JambEnv().reset(seed=12)[0]).all() and (obs4[1] == obs3[1]).all()


def test_reset_mask_in_next_step_mode_starts_the_game_at_once():
    vec = JambVectorEnv(2)
    _, info = vec.reset(seed=2)
    rng = np.random.default_rng(2)
    terminated = np.zeros(2, dtype=bool)
    while not terminated.any():
        _, _, terminated, _, info = vec.step(random_actions(rng, info["action_mask"]))
    _, info = vec.reset(options={"reset_mask": terminated})
    assert not info["action_mask"][terminated].all()  # a real mask: the new game's
    _, rewards, term, _, info = vec.step(random_actions(rng, info["action_mask"]))
    assert info["turn"][terminated].max() <= 1 and not term[terminated].any()


@pytest.mark.parametrize(
    "mask, match",
    [
        (np.zeros(3, dtype=bool), "all False"),
        (np.ones(2, dtype=bool), r"bool array of shape \(3,\)"),
        (np.ones(3, dtype=np.int8), r"bool array of shape \(3,\)"),
        ("all", r"bool array of shape \(3,\)"),
    ],
)
def test_bad_reset_mask(mask, match):
    vec = JambVectorEnv(3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        vec.reset(options={"reset_mask": mask})


@pytest.mark.parametrize("spelling", ["disabled", "Disabled", "DISABLED", AutoresetMode.DISABLED])
def test_disabled_spellings(spelling):
    assert JambVectorEnv(1, autoreset_mode=spelling).autoreset_mode is AutoresetMode.DISABLED


# ---------------------------------------------------------------------------- autoreset_mode in every mode
@pytest.mark.parametrize("vectorization_mode", [None, "vector_entry_point", "sync", "async"])
def test_autoreset_mode_is_taken_the_same_way_in_every_mode(vectorization_mode):
    for mode in MODES:
        vec = make_vec("Jamb-v1", 2, vectorization_mode, autoreset_mode=mode.name.lower(), ruleset="classic_down")
        try:
            assert vec.metadata["autoreset_mode"] is mode and vec.autoreset_mode is mode
            obs, info = vec.reset(seed=0)
            assert obs.shape == (2, vec.single_observation_space.shape[0]) and info["dice"].dtype == np.int8
        finally:
            vec.close()


def test_autoreset_mode_reaching_jambenv_is_a_clear_error():
    for vectorization_mode in ("sync", "async"):
        with pytest.raises(ValueError, match=r"autoreset_mode=.* is an option of the vector env.*vector_kwargs"):
            gym.make_vec("Jamb-v1", 2, vectorization_mode=vectorization_mode, autoreset_mode="same_step")
    for mode in MODES:  # the default vectorization takes it as a keyword
        assert gym.make_vec("Jamb-v1", 2, autoreset_mode=mode).metadata["autoreset_mode"] is mode
    with pytest.raises(ValueError, match="give it once"):
        make_vec("Jamb-v1", 2, "sync", autoreset_mode="same_step", vector_kwargs={"autoreset_mode": "next_step"})
    with pytest.raises(ValueError, match="vectorization_mode must be"):
        make_vec("Jamb-v1", 2, "threads")
    with pytest.raises(ValueError, match="autoreset_mode must be"):
        make_vec("Jamb-v1", 2, autoreset_mode="sometimes")


# ---------------------------------------------------------------------------- call, get_attr, render
def test_call_and_get_attr_read_each_game():
    N, seeds = 2, [21, 22]
    vec = JambVectorEnv(N, illegal_action="raise")
    singles = [JambEnv(illegal_action="raise") for _ in range(N)]
    _, info = vec.reset(seed=seeds)
    for env, s in zip(singles, seeds):
        env.reset(seed=s)
    rng = np.random.default_rng(21)
    terminated = np.zeros(N, dtype=bool)
    while not terminated.any():
        masks = vec.call("action_masks")
        assert all(m.dtype == bool and (m == info["action_mask"][i]).all() for i, m in enumerate(masks))
        for st, env in zip(vec.call("get_state"), singles):
            ref = env.get_state()
            assert (st.stream == ref.stream).all() and st.position == ref.position and st.score == ref.score
            assert (st.game.values == ref.game.values).all() and (st.game.dice == ref.game.dice).all()
        actions = random_actions(rng, info["action_mask"])
        _, _, terminated, _, info = vec.step(actions)
        for env, a in zip(singles, actions):
            env.step(int(a))
    assert vec.call("score") == tuple(env.score for env in singles)
    i = int(np.flatnonzero(terminated)[0])
    assert vec.call("action_masks")[i].all() and not vec.call("legal_mask")[i].any()  # over: JambEnv's two masks
    assert vec.call("action_to_string", 40) == (singles[0].action_to_string(40),) * N
    assert vec.get_attr("ruleset") == (vec.ruleset,) * N
    assert vec.call("np_random") == tuple(vec._rngs)
    assert sum(vec.call("score")) == int(info["score"].sum())
    for name in ("step", "reset", "set_state", "step_outcome", "close", "unwrapped", "set_wrapper_attr"):
        with pytest.raises(ValueError, match=rf"call\('{name}'\) would act on a copy"):
            vec.call(name)
    for name in ("_engine", "no_such_thing"):
        with pytest.raises(AttributeError, match="JambEnv has no public attribute"):
            vec.call(name)


@pytest.mark.parametrize("render_mode", ["rgb_array", "ansi"])
def test_render_is_syncs(render_mode):
    ours = gym.make_vec("Jamb-v1", num_envs=2, render_mode=render_mode)
    sync = gym.make_vec("Jamb-v1", num_envs=2, vectorization_mode="sync", render_mode=render_mode)
    assert ours.metadata["render_modes"] == ["rgb_array", "ansi"] and ours.render_mode == render_mode
    _, info = ours.reset(seed=[1, 2])
    sync.reset(seed=[1, 2])
    actions = random_actions(np.random.default_rng(1), info["action_mask"])
    ours.step(actions), sync.step(actions)
    frames = ours.render()
    assert isinstance(frames, tuple) and len(frames) == 2 and data_equivalence(frames, sync.render(), exact=True)
    if render_mode == "rgb_array":
        assert frames[0].dtype == np.uint8 and frames[0].ndim == 3 and frames[0].shape[2] == 3
    ours.close(), sync.close()


def test_render_without_a_mode_and_bad_modes():
    vec = JambVectorEnv(2)
    vec.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert vec.render() is None
    with pytest.raises(ValueError, match="render_mode must be None, 'rgb_array' or 'ansi', got 'human'"):
        JambVectorEnv(2, render_mode="human")


# ---------------------------------------------------------------------------- mask_dtype
def test_mask_dtype_bool():
    env = JambEnv(mask_in_observation=True, mask_dtype="bool")
    space = env.observation_space["action_mask"]
    assert space == gym.spaces.Box(0, 1, (97,), dtype=np.bool_)
    obs, info = env.reset(seed=0)
    assert obs["action_mask"].dtype == info["action_mask"].dtype == np.bool_ and space.contains(obs["action_mask"])
    assert (obs["action_mask"] == env.action_masks()).all()
    assert JambEnv().observation_space == JambEnv(mask_dtype=np.bool_).observation_space  # the Box alone: unchanged
    assert JambEnv(mask_in_observation=True).observation_space["action_mask"] == gym.spaces.MultiBinary(97)  # default
    vec = JambVectorEnv(2, mask_in_observation=True, mask_dtype=np.dtype(bool))
    assert vec.single_observation_space == env.observation_space
    vobs, vinfo = vec.reset(seed=0)
    assert vobs["action_mask"].dtype == vinfo["action_mask"].dtype == np.bool_ and vec.observation_space.contains(vobs)
    import torch

    logits = torch.zeros(2, 97).masked_fill(~torch.as_tensor(vinfo["action_mask"]), float("-inf"))  # a bool mask
    assert torch.isfinite(logits).sum() == int(vinfo["action_mask"].sum())


def test_maskable_ppo_multi_input_policy_with_a_bool_mask(one_torch_thread):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("Jamb-v1", n_envs=2, seed=0, env_kwargs={"mask_in_observation": True, "mask_dtype": "bool"})
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps == 64


@pytest.fixture
def one_torch_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---------------------------------------------------------------------------- TorchRL
@pytest.fixture(scope="module")
def torchrl(request):
    """TorchRL, or a skip naming the extra. Importing torchrl sets the process-wide
    multiprocessing start method to "spawn" unless one is set: pin the platform's default
    first, so that this file changes nothing for the other tests of the worker."""
    if importlib.util.find_spec("torchrl") is None:
        pytest.skip("torchrl is not installed: the `torchrl` extra (pip install -e '.[torchrl]', make install-ray)")
    multiprocessing.get_start_method()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import torchrl

    return torchrl


def masked_policy(action_spec):
    """A linear masked policy (TorchRL's ``MaskedCategorical`` over ``action_mask``)."""
    import torch
    from tensordict.nn import TensorDictModule
    from torchrl.modules import MaskedCategorical, ProbabilisticActor

    torch.manual_seed(0)
    net = TensorDictModule(torch.nn.Linear(590, 97), in_keys=["observation"], out_keys=["logits"])
    return ProbabilisticActor(
        net, in_keys={"logits": "logits", "mask": "action_mask"}, distribution_class=MaskedCategorical, spec=action_spec
    )


def test_torchrl_one_game(torchrl, one_torch_thread):
    """GymEnv with the bool mask: a masked policy plays a whole game (illegal_action='raise'),
    the game JambEnv plays from the same seed, and its return is the score."""
    from torchrl.envs import GymEnv

    env = GymEnv(
        "Jamb-v1", mask_in_observation=True, mask_dtype="bool", illegal_action="raise", categorical_action_encoding=True
    )
    assert env.full_observation_spec["action_mask"].dtype is __import__("torch").bool
    env.set_seed(0)
    td = env.rollout(1000, masked_policy(env.action_spec))
    assert td["next", "done"][-1].item() and not td["next", "done"][:-1].any()
    twin = JambEnv(illegal_action="raise")
    twin.reset(seed=0)
    twin.reset()  # set_seed resets with the seed, rollout resets once more
    rewards = [twin.step(int(a))[1] for a in td["action"]]
    assert rewards == td["next", "reward"].squeeze(-1).tolist() and twin.game.turn == 52
    assert sum(rewards) == twin.score


def test_torchrl_batched_env_with_disabled_autoreset(torchrl, one_torch_thread):
    """GymWrapper over the default make_vec env with autoreset_mode=DISABLED (TorchRL's
    preferred mode: it restarts finished games with reset_mask): every slot plays the
    games of its JambEnv twin, and each game's return is its info score."""
    import torch
    from torchrl.data import Unbounded
    from torchrl.envs import GymWrapper
    from torchrl.envs.libs.gym import default_info_dict_reader

    N, seed = 3, 1
    venv = gym.make_vec(
        "Jamb-v1",
        num_envs=N,
        autoreset_mode="disabled",
        mask_in_observation=True,
        mask_dtype="bool",
        illegal_action="raise",
    )
    env = GymWrapper(venv, categorical_action_encoding=True)
    env.set_info_dict_reader(default_info_dict_reader(["score"], spec={"score": Unbounded((N,), dtype=torch.int64)}))
    env.set_seed(seed)
    td = env.rollout(330, masked_policy(env.action_spec), break_when_any_done=False)
    done, rewards = td["next", "done"].squeeze(-1), td["next", "reward"].squeeze(-1)
    assert done.sum() >= 2
    for i in range(N):
        twin = JambEnv(illegal_action="raise")
        twin.reset(seed=game_seed(seed, i))
        twin.reset()
        total = 0.0
        for t, a in enumerate(td["action"][i].tolist()):
            _, r, terminated, _, _ = twin.step(a)
            total += r
            assert r == rewards[i, t] and terminated == done[i, t]
            if terminated:
                assert total == td["next", "score"][i, t] == twin.score
                twin.reset()
                total = 0.0


@pytest.mark.slow  # TorchRL builds an AsyncVectorEnv: two worker processes
def test_torchrl_gymenv_num_envs(torchrl, one_torch_thread):
    """``GymEnv(..., num_envs=2)`` (TorchRL's own batched Gymnasium env) builds, reads every
    info key as a tensor of JambEnv's dtype, and plays masked games to their end. (Its
    AsyncVectorEnv autoresets NEXT_STEP, so TorchRL fills the terminal step's next
    observation and info with zeros: docs/tools.md recommends GymWrapper with DISABLED.)"""
    import torch
    from torchrl.envs import GymEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's own unmasked steps, that find the info keys, are illegal
        env = GymEnv(
            "jamb_env:Jamb-v1",
            num_envs=2,
            mask_in_observation=True,
            mask_dtype="bool",
            categorical_action_encoding=True,
        )
    try:
        td = env.rollout(170, masked_policy(env.action_spec), break_when_any_done=False)
    finally:
        env.close()
    assert td["next", "dice"].dtype == torch.int8 and td["next", "dice"].shape == (2, 170, 5)
    assert td["next", "announced"].dtype == td["next", "score"].dtype == torch.int64
    done, write = td["next", "done"].squeeze(-1), layout(load_ruleset("classic")).write_offset
    for i in range(2):  # each game ended after its 52 writes, never with the illegal action's -100
        t = int(done[i].nonzero()[0])
        assert (td["action"][i, : t + 1] >= write).sum() == 52
        assert (td["next", "reward"][i, : t + 1] != JambEnv.ILLEGAL_ACTION_PENALTY).all()


# ---------------------------------------------------------------------------- Tianshou
@pytest.fixture(scope="module")
def tianshou():
    if importlib.util.find_spec("tianshou") is None:
        pytest.skip("tianshou is not installed: the `tianshou` extra (pip install -e '.[tianshou]', make install-ray)")
    import tianshou

    return tianshou


def tianshou_env():
    """The docs/tools.md recipe: the mask in the observation, under Tianshou's keys."""
    env = gym.make("Jamb-v1", mask_in_observation=True, illegal_action="raise")
    space = gym.spaces.Dict({"obs": env.observation_space["observation"], "mask": env.observation_space["action_mask"]})
    return gym.wrappers.TransformObservation(env, lambda o: {"obs": o["observation"], "mask": o["action_mask"]}, space)


@pytest.mark.slow  # Tianshou compiles its numba helpers (uncached) in every process: about 12 s here
def test_tianshou_masked_dqn_one_game_and_batched(tianshou, one_torch_thread):
    """DQN's Q-values masked by ``obs.mask``: with exploration (DummyVectorEnv of 4) and
    greedy (one env), every action legal (illegal_action='raise'); each episode's return
    is its score, the info keys stored numerically; one update from the buffer."""
    import torch
    from tianshou.algorithm.modelfree.dqn import DQN, DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

    torch.manual_seed(0)
    envs = DummyVectorEnv([tianshou_env] * 4)
    envs.seed(0)
    env = tianshou_env()
    net = Net(state_shape=env.observation_space["obs"].shape, action_shape=env.action_space.n, hidden_sizes=[32])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.5)
    algo = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3))
    buffer = VectorReplayBuffer(2000, len(envs))
    collector = Collector(algo, envs, buffer, exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_episode=4)
    info = buffer.info
    assert sorted(stats.returns.tolist()) == sorted(info.score[buffer.done].tolist())
    assert info.dice.dtype == np.int8 and info.dice.shape[1:] == (5,) and info.announced.dtype == np.int64
    assert (info.turn[buffer.done] == 52).all() and buffer.done.sum() == 4
    with policy_within_training_step(policy), torch_train_mode(policy):
        loss = algo.update(buffer, sample_size=64).loss
    assert np.isfinite(loss)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Single environment detected, wrap to DummyVectorEnv."
        single = Collector(policy, env)
    single.reset()
    one = single.collect(n_episode=1)
    assert one.n_collected_episodes == 1 and one.returns[0] == single.buffer.info.score[single.buffer.done][0]
