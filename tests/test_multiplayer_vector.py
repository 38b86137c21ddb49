"""The batched multiplayer env (jamb_env.multiplayer_vector.SeatVecEnv) plays the games of
the AEC env (jamb_env.multiplayer.raw_env) in lockstep."""

from __future__ import annotations

import numpy as np
import pytest

from jamb_env.multiplayer import raw_env
from jamb_env.multiplayer_vector import SeatVecEnv
from jamb_env.seeding import game_seed


def first_legal(obs, masks, views):
    return masks.argmax(axis=1)


first_legal.batched = True


def lowest_write(obs, masks, views):
    """A deterministic policy that writes as soon as it can (the highest-id legal action)."""
    return masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)


lowest_write.batched = True


@pytest.mark.parametrize("preset,players,scoring,reward,opponent", [
    ("classic", 2, "separate", "score", first_legal),
    ("standard", 3, "separate", "margin", lowest_write),
    ("classic", 2, "shared", "score", lowest_write),
    ("standard", 3, "shared", "win", first_legal),
    ("six_dice_copy", 2, "separate", "score", lowest_write),  # lowest_write takes the copy column whenever offered
    ("six_dice_copy", 3, "shared", "margin", lowest_write),
    ("joly", 2, "separate", "win", lowest_write),  # the highest ids: baskets and jokers first, while they last
])
def test_lockstep_with_the_aec_env(preset, players, scoring, reward, opponent):
    N, seed = 3, 5
    venv = SeatVecEnv(N, opponent, ruleset=preset, num_players=players, scoring=scoring, reward=reward, seed=seed)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    aecs = []
    for g in range(N):
        e = raw_env(preset, players, scoring, reward)
        e.reset(seed=game_seed(seed, g))
        aecs.append(e)
    learner = [f"player_{g % players}" for g in range(N)]  # the rotating seat of each slot's first game
    returns = [0.0] * N

    def advance(g):
        """Opponents move in the AEC env until the learner's turn (or the end)."""
        e = aecs[g]
        gained = 0.0
        while e.agent_selection != learner[g] and not e.terminations[learner[g]]:
            o = e.observe(e.agent_selection)
            e.step(int(opponent(o["observation"][None], o["action_mask"].astype(bool)[None], None)[0]))
            gained += e.rewards[learner[g]]
        return gained

    pending = [advance(g) for g in range(N)]
    finished = [False] * N
    for _ in range(3000):
        for g in range(N):
            if not finished[g]:
                np.testing.assert_array_equal(obs[g], aecs[g].observe(learner[g])["observation"])
                np.testing.assert_array_equal(venv.action_masks()[g], aecs[g].observe(learner[g])["action_mask"].astype(bool))
        masks = venv.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = venv.step(actions)
        for g in range(N):
            if finished[g]:
                continue
            e = aecs[g]
            e.step(int(actions[g]))
            r = pending[g] + e.rewards[learner[g]] + advance(g)
            pending[g] = 0.0
            assert rewards[g] == pytest.approx(r), (g, rewards[g], r)
            returns[g] += r
            assert dones[g] == e.terminations[learner[g]]
            if dones[g]:
                assert infos[g]["scores"] == e.infos[learner[g]]["scores"]
                finished[g] = True
        if all(finished):
            break
    assert all(finished)


def test_maskable_ppo_trains_on_it_and_bad_input_is_refused():
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = SeatVecEnv(8, first_legal, ruleset="classic_down", num_players=2, reward="win", seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, seed=0).learn(256)
    venv.set_opponent(model)  # self-play: the model itself as the opponent
    venv.reset()
    venv.step(np.array([np.flatnonzero(m)[0] for m in venv.action_masks()]))
    with pytest.raises(ValueError, match="num_envs"):
        SeatVecEnv(0, first_legal)
    with pytest.raises(ValueError, match="seat must be"):
        SeatVecEnv(2, first_legal, seat=2)
    with pytest.raises(ValueError, match="an opponent is"):
        SeatVecEnv(2, object())
    with pytest.raises(ValueError, match="reward must be"):
        SeatVecEnv(2, first_legal, reward="gold")


def test_an_agent_opponent_and_the_illegal_action_rules():
    from agents import load

    venv = SeatVecEnv(4, load("greedy", ruleset="classic"), num_players=2, seed=1)
    venv.reset()
    masks = venv.action_masks()
    bad = np.array([np.flatnonzero(~m)[-1] for m in masks])
    obs, rewards, dones, infos = venv.step(bad)
    assert dones.all() and (rewards == -100.0).all() and all(i["illegal_action"] for i in infos)
    strict = SeatVecEnv(2, load("greedy", ruleset="classic"), illegal_action="raise", seed=1)
    strict.reset()
    from jamb_env import IllegalActionError

    with pytest.raises(IllegalActionError):
        strict.step(np.array([np.flatnonzero(~m)[-1] for m in strict.action_masks()]))


def test_agent_opponents_see_their_seat_on_a_shared_sheet():
    seen = []

    class Spy:
        def act(self, view, observation, mask):
            seen.append((view.scoring, view.num_players, view.player, view.owner is not None))
            return int(np.flatnonzero(mask)[0])

    venv = SeatVecEnv(2, Spy(), ruleset="classic", num_players=3, scoring="shared", seed=2, seat=0)
    venv.reset()
    venv.step(np.array([np.flatnonzero(m)[-1] for m in venv.action_masks()]))
    assert seen and all(s == "shared" and n == 3 and p in (1, 2) and has for s, n, p, has in seen)


def test_a_broken_opponent_needs_a_reset_and_its_junk_is_refused():
    calls = {"n": 0, "junk": None}

    def opponent(obs, masks, views):
        calls["n"] += 1
        if calls["junk"] is not None:
            return calls["junk"]
        return masks.argmax(axis=1)

    opponent.batched = True
    venv = SeatVecEnv(2, opponent, ruleset="classic_down", seed=0, seat=0)
    with pytest.raises(RuntimeError, match="reset"):
        venv.action_masks()
    venv.reset()
    for junk in (np.array([0.5, 1.5]), [None, None], np.zeros(5, np.int64), ["a", "b"]):
        venv.reset()
        calls["junk"] = junk
        with pytest.raises(ValueError):
            for _ in range(20):  # until a learner write hands the turn to the opponent
                m = venv.action_masks()
                venv.step(np.array([np.flatnonzero(r)[-1] for r in m]))
        calls["junk"] = None
        with pytest.raises(RuntimeError, match="reset"):
            venv.step(np.zeros(2, np.int64))
