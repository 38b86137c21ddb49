"""One conformance test of the two multiplayer engines: the AEC env
(jamb_env.multiplayer.raw_env, over jamb_env.rules.match) and the batched seat env
(jamb_env.multiplayer_vector.SeatVecEnv) play the same games step by step, on every
preset, with separate sheets and (where the preset allows it) the shared sheet, 2 to 4
players and every reward: the same observations and masks (the learner's at every step,
each opponent's at every move), rewards, ends and final scores."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from jamb_env.engine.seeding import game_seed
from jamb_env.multiplayer import REWARDS, raw_env
from jamb_env.multiplayer_vector import SeatVecEnv
from jamb_env.rules import list_rulesets, load_ruleset
from tests.helpers import slow_after


def _cases():
    cases, k = [], 0
    for preset in list_rulesets():
        rules = load_ruleset(preset)
        for scoring in ("separate", "shared"):
            if scoring == "shared" and (rules.derived_columns or rules.jokers):
                continue
            cases.append((preset, 2 + k % 3, scoring, REWARDS[k % len(REWARDS)]))
            k += 1
    return cases


def choose(obs, mask) -> int:
    """A legal action picked by a hash of what the player sees (the same in both envs):
    one time in three the highest id (a write as soon as one is legal, the copy column
    whenever offered where it is the last column, baskets and jokers while they last),
    else any legal action."""
    legal = np.flatnonzero(mask)
    h = zlib.crc32(np.ascontiguousarray(obs, np.float32).tobytes())
    return int(legal[-1] if h % 3 == 0 else legal[h % len(legal)])


@pytest.mark.parametrize("preset,players,scoring,reward", slow_after(_cases(), keep=2))  # classic: both sheets
def test_the_aec_env_and_seat_vec_env_take_the_same_steps(preset, players, scoring, reward):
    N, seed = 2, 3
    seen = {g: [] for g in range(N)}  # what the batched opponent saw, per game, in order

    def opponent(obs, masks, views):
        for k in range(len(masks)):
            seen[int(views.games[k])].append((obs[k].copy(), masks[k].copy()))
        return np.array([choose(o, m) for o, m in zip(obs, masks)], np.int64)

    opponent.batched = True
    venv = SeatVecEnv(N, opponent, ruleset=preset, num_players=players, scoring=scoring, reward=reward, seed=seed)
    aecs = []
    for g in range(N):
        e = raw_env(preset, players, scoring, reward)
        e.reset(seed=game_seed(seed, g))
        aecs.append(e)
    learner = [f"player_{g % players}" for g in range(N)]  # the rotating seat of each slot's first game

    def advance(g):
        """The opponents move in the AEC env until the learner's turn (or the end); each
        move's observation and mask are the ones SeatVecEnv's opponent saw."""
        e, gained = aecs[g], 0.0
        while e.agent_selection != learner[g] and not e.terminations[learner[g]]:
            o = e.observe(e.agent_selection)
            obs, mask = seen[g].pop(0)
            np.testing.assert_array_equal(obs, o["observation"])
            np.testing.assert_array_equal(mask, o["action_mask"].astype(bool))
            e.step(choose(o["observation"], o["action_mask"]))
            gained += e.rewards[learner[g]]
        return gained

    obs = venv.reset()
    pending = [advance(g) for g in range(N)]
    rng = np.random.default_rng(0)
    finished = [False] * N
    for _ in range(5000):
        masks = venv.action_masks()
        for g in range(N):
            if not finished[g]:
                o = aecs[g].observe(learner[g])
                np.testing.assert_array_equal(obs[g], o["observation"])
                np.testing.assert_array_equal(masks[g], o["action_mask"].astype(bool))
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
            assert dones[g] == e.terminations[learner[g]]
            if dones[g]:
                assert infos[g]["scores"] == e.infos[learner[g]]["scores"]
                np.testing.assert_array_equal(infos[g]["terminal_observation"], e.observe(learner[g])["observation"])
                finished[g] = True  # the slot's next game is not compared
        if all(finished):
            break
    assert all(finished)
