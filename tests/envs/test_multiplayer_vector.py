"""The batched multiplayer env (jamb_env.multiplayer_vector.SeatVecEnv): training on it,
its opponents and bad input. That it plays the AEC env's games step by step is
tests/conformance/test_match_lockstep.py."""

from __future__ import annotations

import numpy as np
import pytest

from jamb_env.multiplayer_vector import SeatVecEnv


def first_legal(obs, masks, views):
    return masks.argmax(axis=1)


first_legal.batched = True


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


def test_an_opponent_never_changes_inside_a_game():
    """``set_opponent`` every few steps (as self-play's callback does on every rollout):
    every move of a game is made by the opponent that game started with, and the new
    opponent takes over at each slot's next game."""
    N, moves = 4, []

    def make(label):
        def policy(obs, masks, views):
            moves.extend((int(g), label) for g in views.games)
            return np.array([np.flatnonzero(m)[0] for m in masks])

        policy.batched, policy.label = True, label
        return policy

    venv = SeatVecEnv(N, make(0), ruleset="classic_down", num_players=2, seed=0)
    venv.reset()
    current = [o.label for o in venv.game_opponents()]
    assert current == [0] * N
    label, games_ended, changed_at_ends = 0, 0, 0
    for step in range(300):
        if step % 5 == 0:
            label += 1
            venv.set_opponent(make(label))
        start = len(moves)
        _, _, dones, _ = venv.step(np.array([np.flatnonzero(m)[0] for m in venv.action_masks()]))
        after = [o.label for o in venv.game_opponents()]
        for g in range(N):
            made = {lab for slot, lab in moves[start:] if slot == g}
            if dones[g]:  # the game that ended and the slot's next one
                assert made <= {current[g], after[g]} and after[g] == label
                games_ended += 1
                changed_at_ends += after[g] != current[g]
            else:
                assert made <= {current[g]} and after[g] == current[g]
        current = after
    assert games_ended >= 4 and changed_at_ends >= 4
