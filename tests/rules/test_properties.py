"""Invariants over random legal games of every preset (RULES.md §4; Pgx-style api test)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jamb_env import JambEnv
from jamb_env.rules import column_totals, score_parts
from tests.helpers import check_finished_sheet, playable_presets, slow_after

PRESETS = playable_presets()


def play_random_game(env: JambEnv, seed: int, policy_seed: int, check_obs: bool = True) -> dict:
    """Play one uniformly random legal game and check the invariants at every step."""
    rng = np.random.default_rng(policy_seed)
    rules = env.ruleset
    obs, info = env.reset(seed=seed)
    ret, writes, steps = 0.0, 0, 0
    terminated = False
    while not terminated:
        mask = env.action_masks()
        assert mask.any(), f"dead end at turn {info['turn']} roll {info['roll']} (seed {seed})"
        assert (info["action_mask"] == mask).all()
        a = int(rng.choice(np.flatnonzero(mask)))
        kind = env.decode_action(a).kind
        obs, reward, terminated, truncated, info = env.step(a)
        assert not truncated and not info.get("illegal_action")
        if check_obs:
            assert env.observation_space.contains(obs)
            # the cached sheet features equal a from-scratch encoding
            assert (obs == env._encoder.encode(env.game)).all()
        ret += reward
        writes += kind == "write"
        steps += 1
        assert info["turn"] == writes
        assert terminated == (writes == rules.num_cells)
    assert ret == info["score"]  # return equals the final sheet score
    assert env.action_masks().all() and info["action_mask"].all()  # terminal masks are all ones (Pgx)
    game = env.game
    assert all(int(f) == (1 << rules.num_rows) - 1 for f in game.filled)  # every cell written
    assert info["score"] == sum(column_totals(rules, game).values())
    parts = score_parts(rules, game)
    assert info["score"] == parts["upper"] + parts["bonus"] + parts["difference"] + parts["lower"]
    check_finished_sheet(rules, game)
    return {"score": info["score"], "steps": steps}


@pytest.mark.parametrize("preset", slow_after(PRESETS))  # 60 games a preset: classic in the fast suite
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), policy_seed=st.integers(0, 2**31 - 1))
def test_random_legal_games_hypothesis(preset, seed, policy_seed):
    play_random_game(JambEnv(ruleset=preset), seed, policy_seed)


def test_die_faces_are_uniform():
    """Chi-square over the dice streams of 400 games (about 300,000 dice)."""
    env = JambEnv()
    counts = np.zeros(6)
    for s in range(400):
        env.reset(seed=s)
        counts += np.bincount(env.get_state().stream - 1, minlength=6)
    expected = counts.sum() / 6
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 20.52  # 5 degrees of freedom, p = 0.001
