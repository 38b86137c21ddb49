"""The multiplayer AEC env's global state (``state()`` / ``state_space``, for PettingZoo's
``state_test`` and centralized critics) and PettingZoo's test utilities for turn-based AEC
games, for 2..5 players on separate and shared sheets."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.test.state_test import test_state as pz_state_test
from pettingzoo.test.state_test import test_state_space as pz_state_space_test
from pettingzoo.utils.wrappers import TerminateIllegalWrapper

from jamb_env import multiplayer
from jamb_env.engine.observation import encoder
from jamb_env.rules import game as core
from jamb_env.rules import load_ruleset
from jamb_env.rules import match as M
from tests.helpers import slow_after

COMBOS = [(players, scoring) for players in range(M.MIN_PLAYERS, M.MAX_PLAYERS + 1) for scoring in M.SCORING_MODES]


@pytest.mark.parametrize("players,scoring", slow_after(COMBOS))
def test_pettingzoo_test_utilities_pass(players, scoring):
    """api_test, seed_test and state_test's AEC half (state_space, then state() after every
    step; its random actions ignore the mask, so the game runs under PettingZoo's
    TerminateIllegalWrapper, the classic games' convention). state_test's parallel half,
    parallel_api_test and max_cycles_test are for parallel envs (a Jamb turn is several
    moves of one player: not parallelizable); bombardment_test compares ``step()``'s
    return, None in the AEC API, with a Dict observation and fails on any such env."""
    make = lambda: multiplayer.env(ruleset="classic", num_players=players, scoring=scoring)  # noqa: E731
    api_test(make(), num_cycles=200)
    seed_test(make, num_cycles=100)
    env = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # state_test reports most problems as warnings: make them failures
        pz_state_space_test(env)
        pz_state_test(TerminateIllegalWrapper(env, illegal_reward=-1.0), num_cycles=100)
    assert env.state_space.shape == (multiplayer.state_size(env.unwrapped.ruleset, players, scoring),)
    assert env.state_space.dtype == np.float32


@pytest.mark.parametrize("scoring", M.SCORING_MODES)
def test_pettingzoo_render_test(scoring, capsys):
    render_test(
        lambda render_mode: multiplayer.env(ruleset="classic", num_players=2, scoring=scoring, render_mode=render_mode)
    )
    assert "player_1" in capsys.readouterr().out  # render_mode="human" printed the sheets


def _check_state(env, rules, state, segments):
    """The state is the documented concatenation, read back from the match."""
    ms = env.unwrapped.match
    enc = encoder(rules)
    assert env.state_space.contains(state) and state.dtype == np.float32
    sheets = [segments[f"sheet_{p}"] for p in range(ms.num_players)] if ms.owner is None else [segments["sheet"]]
    for at, st in zip(sheets, ms.sheets):
        np.testing.assert_array_equal(state[at], enc.encode(st, mask=core.legal_mask(rules, st)))
    if ms.owner is not None:
        for p in range(ms.num_players):
            np.testing.assert_array_equal(state[segments[f"owner_{p}"]], (ms.owner.ravel() == p).astype(np.float32))
    assert np.flatnonzero(state[segments["to_move"]]).tolist() == [ms.to_move]
    scores = M.scores(rules, ms)
    np.testing.assert_allclose(
        state[segments["scores"]] * multiplayer._score_bound(rules), scores, rtol=1e-6, atol=1e-3
    )


@pytest.mark.parametrize(
    "preset,players,scoring",
    slow_after(
        [
            ("standard", 2, "separate"),
            ("six_dice_copy", 3, "separate"),
            ("classic", 2, "shared"),
            ("six_dice_copy", 4, "shared"),
        ],
        fast=[("classic", 2, "shared")],
    ),
)
def test_the_state_holds_the_whole_game_at_every_step(preset, players, scoring):
    """Over a whole random legal game: inside state_space, the documented segments
    (every sheet's solitaire observation, the owner planes, the player to move, the
    scores), and a new state after every action (each action changes the game)."""
    rules = load_ruleset(preset)
    env = multiplayer.env(ruleset=rules, num_players=players, scoring=scoring)
    segments = multiplayer.state_segments(rules, players, scoring)
    assert list(segments.values())[-1].stop == env.state_space.shape[0]
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    before = env.state()
    _check_state(env, rules, before, segments)
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        assert agent == f"player_{np.flatnonzero(before[segments['to_move']])[0]}"
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        after = env.state()
        assert not np.array_equal(after, before), f"step {steps}: the state did not change"
        if steps % 7 == 0 or not env.agents or env.terminations[env.agent_selection]:
            _check_state(env, rules, after, segments)
        before, steps = after, steps + 1
    assert env.unwrapped.match.sheets[0].turn == rules.num_cells
    _check_state(env, rules, env.state(), segments)  # and once every agent has left


def test_the_state_carries_an_obligation_of_a_player_not_to_move():
    """The answer obligation of the next player (separate sheets) is in the state, though
    no observation of the player to move shows it as theirs."""
    rules = load_ruleset("standard")
    assert core.layout(rules).answer_column >= 0
    env = multiplayer.env(ruleset=rules, num_players=3, scoring="separate")
    segments = multiplayer.state_segments(rules, 3, "separate")
    due = encoder(rules).segments["answer_due"].slice
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    lay = core.layout(rules)
    for _agent in env.agent_iter():
        obs, _, term, _, _ = env.last()
        if term:
            pytest.fail("no answer obligation arose in a whole game")
        mask = obs["action_mask"].astype(bool)
        announce = [c * rules.num_rows + r for c in lay.announce_columns for r in range(rules.num_rows)]
        writes = [a for a in np.flatnonzero(mask) if lay.is_write(a) and a - lay.write_offset in announce]
        env.step(int(writes[0] if writes else rng.choice(np.flatnonzero(mask))))
        ms = env.unwrapped.match
        nxt = ms.to_move
        if ms.sheets[nxt].answer_due >= 0 and ms.sheets[nxt].roll == 1:
            state = env.state()
            row = ms.sheets[nxt].answer_due
            assert np.flatnonzero(state[segments[f"sheet_{nxt}"]][due]).tolist() == [row]
            for q in range(3):
                if q != nxt:
                    assert not state[segments[f"sheet_{q}"]][due].any()
            return


def test_state_refuses_bad_calls_clearly():
    raw = multiplayer.raw_env(ruleset="classic", num_players=2)
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        raw.state()
    raw.reset(seed=1)
    rules = raw.ruleset
    with pytest.raises(ValueError, match="scores must be 2 integers"):
        multiplayer.match_state(rules, raw.match, [1.5, 0])
    with pytest.raises(ValueError, match="expected a MatchState"):
        multiplayer.match_state(rules, raw.match.sheets[0])
    with pytest.raises(ValueError, match="num_players must be an integer in 2..5"):
        multiplayer.state_size(rules, 6, "separate")
    # scores computed when not given: the same vector
    np.testing.assert_array_equal(multiplayer.match_state(rules, raw.match), raw.state())
