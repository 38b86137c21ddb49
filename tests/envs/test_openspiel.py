"""The OpenSpiel game ``python_jamb`` (jamb_env/openspiel.py) over the chance API, and the
chance API's outcome ids (``jamb_env.rules.outcome_distribution``).

OpenSpiel is optional (the ``openspiel`` extra): its tests skip where ``pyspiel`` is
missing; the outcome-id tests of the core always run."""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

import numpy as np
import pytest

import jamb_env
from jamb_env import IllegalActionError, RulesetError, multiplayer
from jamb_env.rules import apply_action as core_apply
from jamb_env.rules import apply_outcome as core_outcome
from jamb_env.rules import (
    chance_outcomes,
    first_roll_outcomes,
    is_over,
    layout,
    list_rulesets,
    load_ruleset,
    new_game,
    outcome_distribution,
    start_turn,
)
from jamb_env.rules import match as M
from tests.helpers import slow_after

ROOT = Path(__file__).resolve().parents[2]
try:
    import pyspiel as _pyspiel
except ImportError:  # the openspiel extra is optional
    _pyspiel = None


@pytest.fixture(scope="module")
def pyspiel():
    if _pyspiel is None:
        pytest.skip("OpenSpiel is not installed: pip install -e '.[openspiel]' (the openspiel extra)")
    import jamb_env.openspiel  # noqa: F401  (registers python_jamb)

    return _pyspiel


# ---------------------------------------------------------------- the outcome ids (core)
@pytest.mark.parametrize("preset", ["classic", "six_dice", "joly"])
def test_outcome_ids_are_the_dice_multiset_indices_of_the_chance_api(preset):
    rules = load_ruleset(preset)
    tables, M_ = rules.tables, rules.tables.num_multisets
    assert M_ == {5: 252, 6: 462}[rules.dice]
    assert tables.sorted_dice[0].tolist() == [1] * rules.dice and tables.sorted_dice[-1].tolist() == [6] * rules.dice
    assert all(rules.dice_index(tables.sorted_dice[m][::-1]) == m for m in range(M_))  # any order, the same id
    st = new_game(rules)
    first = outcome_distribution(rules, st)
    assert first.shape == (M_,) and abs(first.sum() - 1) < 1e-12 and (first > 0).all()
    assert [(rules.dice_index(d), p) for d, p in first_roll_outcomes(rules, st)] == [(m, first[m]) for m in range(M_)]
    st = start_turn(rules, st, [2, 2, 3, 5, 6, 6][: rules.dice])
    lay = layout(rules)
    holds = [a for a in range(lay.num_holds - 1) if rules.tables.hold_canonical[st.dice_index, a]]
    if rules.jokers:
        holds.append(lay.basket)
    for a in holds:
        row = outcome_distribution(rules, st, a)
        assert abs(row.sum() - 1) < 1e-12
        assert [(rules.dice_index(d), p) for d, p in chance_outcomes(rules, st, a)] == [
            (m, row[m]) for m in np.flatnonzero(row)
        ]
    row[:] = 0  # a new array each call: the tables stay intact
    assert outcome_distribution(rules, st, holds[0]).sum() == pytest.approx(1)
    with pytest.raises(ValueError, match="a first roll needs a state between turns"):
        outcome_distribution(rules, st)
    with pytest.raises(ValueError, match="not a re-roll"):
        outcome_distribution(rules, st, lay.write_offset)


# ---------------------------------------------------------------- OpenSpiel's own tests
@pytest.mark.parametrize("preset", slow_after(list_rulesets()))
def test_random_sim_test_on_every_preset(pyspiel, preset):
    """OpenSpiel's C++ conformance simulation (legal actions sorted and empty for others,
    unique action strings, clone, serialize and deserialize, tensor sizes and finiteness,
    returns within the utility bounds, game length within max_game_length)."""
    game = pyspiel.load_game("python_jamb", {"ruleset": preset})
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize(
    "preset,players,scoring",
    slow_after(
        [
            ("standard", 2, "separate"),
            ("six_dice_copy", 3, "separate"),
            ("joly", 2, "separate"),
            ("classic", 4, "shared"),
            ("six_dice_copy", 5, "shared"),
        ],
        fast=[("classic", 4, "shared")],
    ),
)
def test_random_sim_test_multiplayer(pyspiel, preset, players, scoring):
    game = pyspiel.load_game("python_jamb", {"ruleset": preset, "players": players, "scoring": scoring})
    assert game.num_players() == players
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_python_sim_pickles_clones_and_serializes(pyspiel):
    """The checks of OpenSpiel's Python games_sim_test: pickled game and state, native
    serialization, clones that play on alike."""
    game = pyspiel.load_game("python_jamb", {"ruleset": "standard", "players": 2})
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    rng = np.random.default_rng(0)
    state, step = game.new_initial_state(), 0
    while not state.is_terminal():
        if step & (step - 1) == 0:  # every power of two, as games_sim_test
            again = pickle.loads(pickle.dumps(state))
            assert str(again) == str(state) and again.history() == state.history()
            g2, s2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
            assert str(g2) == str(game) and str(s2) == str(state)
        if state.is_chance_node():
            ids, probs = zip(*state.chance_outcomes())
            action = int(rng.choice(ids, p=probs))
        else:
            action = int(rng.choice(state.legal_actions()))
        clone = state.clone()
        state.apply_action(action)
        clone.apply_action(action)
        assert str(clone) == str(state) and clone.history() == state.history()
        step += 1
    assert state.legal_actions() == [] and state.returns() == [float(x) for x in state.scores()]


# ---------------------------------------------------------------- the game is the env's
def test_solitaire_plays_the_env_game(pyspiel):
    """Driven by JambEnv's dice: the same chance outcomes (ids of the env's dice), legal
    actions = the env's mask, observation and information-state tensors = the env's
    observation, and the final return = the env's score; returns are 0 before the end."""
    game = pyspiel.load_game("python_jamb", {"ruleset": "classic"})
    env = jamb_env.JambEnv(ruleset="classic")
    rules = env.ruleset
    obs, info = env.reset(seed=7)
    state = game.new_initial_state()
    rng = np.random.default_rng(7)
    terminated = False
    while not terminated:
        assert state.is_chance_node()
        outcome = rules.dice_index(env.game.dice)
        assert outcome in dict(state.chance_outcomes())
        assert state.action_to_string(outcome) == "dice " + " ".join(map(str, env.game.dice.tolist()))
        state.apply_action(outcome)
        assert state.current_player() == 0 and state.returns() == [0.0]
        assert state.legal_actions() == np.flatnonzero(env.action_masks()).tolist()
        np.testing.assert_array_equal(np.array(state.observation_tensor(0), np.float32), obs)
        np.testing.assert_array_equal(np.array(state.information_state_tensor(0), np.float32), obs)
        a = int(rng.choice(state.legal_actions()))
        obs, reward, terminated, _, info = env.step(a)
        state.apply_action(a)
        while not state.is_chance_node() and not state.is_terminal():  # announcements and jokers roll nothing
            assert state.legal_actions() == np.flatnonzero(env.action_masks()).tolist()
            np.testing.assert_array_equal(np.array(state.observation_tensor(0), np.float32), obs)
            a = int(rng.choice(state.legal_actions()))
            obs, reward, terminated, _, info = env.step(a)
            state.apply_action(a)
        assert state.scores() == [env.score]
    assert state.is_terminal() and state.returns() == [float(info["score"])] == state.rewards()
    np.testing.assert_array_equal(np.array(state.observation_tensor(0), np.float32), obs)


@pytest.mark.parametrize("scoring", slow_after(M.SCORING_MODES, fast=["shared"]))
def test_multiplayer_plays_the_pettingzoo_game(pyspiel, scoring):
    """Driven by the AEC env's dice: seating and rolls as outcomes, the player to move and
    their legal actions, every player's observation tensor = the env's observation, and
    the final returns = the env's scores."""
    players = 3
    game = pyspiel.load_game("python_jamb", {"ruleset": "six_dice_copy", "players": players, "scoring": scoring})
    env = multiplayer.raw_env(ruleset="six_dice_copy", num_players=players, scoring=scoring)
    rules = env.ruleset
    env.reset(seed=5)
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(p, 1 / players) for p in range(players)]
    state.apply_action(env.match.first)
    rng = np.random.default_rng(5)
    while env.agents and not env.terminations[env.agent_selection]:
        if state.is_chance_node():
            state.apply_action(rules.dice_index(M.sheet_in_play(env.match).dice))
        p = env.match.to_move
        assert state.current_player() == p and state.returns() == [0.0] * players
        for q in range(players):
            np.testing.assert_array_equal(
                np.array(state.observation_tensor(q), np.float32), env.observe(f"player_{q}")["observation"]
            )
        assert state.legal_actions() == np.flatnonzero(env.observe(f"player_{p}")["action_mask"]).tolist()
        a = int(rng.choice(state.legal_actions()))
        env.step(a)
        state.apply_action(a)
        assert state.scores() == env.infos[env.agent_selection]["scores"]
    assert state.is_terminal() and state.returns() == [float(x) for x in env.infos["player_0"]["scores"]]


def test_chance_nodes_have_the_exact_probabilities(pyspiel):
    """Every chance node of a game (first rolls, re-rolls, Joly's baskets): the outcome ids
    and probabilities of the chance API on the sheet, summing to 1."""
    game = pyspiel.load_game("python_jamb", {"ruleset": "joly"})
    rules = game.rules
    rng = np.random.default_rng(1)
    state, seen = game.new_initial_state(), set()
    basket = layout(rules).basket
    while not state.is_terminal():
        if state.is_chance_node():
            st, pending = state.sheet, state.pending
            expect = first_roll_outcomes(rules, st) if pending < 0 else chance_outcomes(rules, st, pending)
            got = state.chance_outcomes()
            assert got == [(rules.dice_index(d), p) for d, p in expect]
            assert abs(sum(p for _, p in got) - 1) < 1e-12
            seen.add("first" if pending < 0 else "basket" if pending == basket else "reroll")
            ids, probs = zip(*got)
            state.apply_action(int(rng.choice(ids, p=probs)))
        else:
            legal = state.legal_actions()
            state.apply_action(basket if basket in legal else int(rng.choice(legal)))
    assert seen == {"first", "reroll", "basket"}


def test_expectiminimax_on_the_last_reroll_is_the_exact_expectation(pyspiel):
    """OpenSpiel's expectiminimax at the last re-roll of the last turn gives what the
    chance API gives by hand: the best over the legal moves of the expected final score."""
    from open_spiel.python.algorithms.minimax import expectiminimax

    game = pyspiel.load_game("python_jamb", {"ruleset": "classic_down"})
    rules = game.rules
    lay = layout(rules)
    rng = np.random.default_rng(4)
    state = game.new_initial_state()
    while not (state.sheet.turn == rules.num_cells - 1 and state.sheet.roll == 2) or state.is_chance_node():
        if state.is_chance_node():
            ids, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(ids, p=probs)))
        else:
            legal = state.legal_actions()
            last = state.sheet.turn == rules.num_cells - 1
            state.apply_action(int(rng.choice([a for a in legal if not (last and lay.is_write(a))] or legal)))
    st = state.sheet
    base = state.scores()[0]

    def write_value(s):
        (a,) = [a for a in np.flatnonzero(jamb_env.rules.legal_mask(rules, s)) if lay.is_write(a)]
        after, points = core_apply(rules, s, int(a))
        assert is_over(rules, after)
        return base + points

    by_hand = {}
    for a in state.legal_actions():
        if lay.is_write(a):
            by_hand[a] = write_value(st)
        else:
            by_hand[a] = sum(p * write_value(core_outcome(rules, st, a, d)) for d, p in chance_outcomes(rules, st, a))
    value, action = expectiminimax(state, 2, lambda s: pytest.fail("the search must reach the end"), 0)
    assert value == pytest.approx(max(by_hand.values()), abs=1e-9)
    assert by_hand[action] == pytest.approx(value, abs=1e-9)


# ---------------------------------------------------------------- bad input
def test_bad_parameters_moves_and_outcomes_are_refused_clearly(pyspiel):
    with pytest.raises(ValueError, match=r"players must be 1 \(solitaire\) or 2..5, got 6"):
        pyspiel.load_game("python_jamb", {"players": 6})
    with pytest.raises(RulesetError, match="unknown ruleset 'nope'"):
        pyspiel.load_game("python_jamb", {"ruleset": "nope"})
    with pytest.raises(ValueError, match="scoring='shared' is a multiplayer mode"):
        pyspiel.load_game("python_jamb", {"scoring": "shared"})
    with pytest.raises(RulesetError, match="has jokers"):
        pyspiel.load_game("python_jamb", {"ruleset": "joly", "players": 2, "scoring": "shared"})
    with pytest.raises(ValueError, match="scoring must be one of"):
        pyspiel.load_game("python_jamb", {"players": 2, "scoring": "both"})
    with pytest.raises(FileNotFoundError):
        pyspiel.load_game("python_jamb", {"ruleset": str(ROOT / "no_such_rules.yaml")})
    game = pyspiel.load_game("python_jamb", {"ruleset": "classic"})
    state = game.new_initial_state()
    with pytest.raises(
        ValueError, match=r"chance outcome 252 is not possible here; the outcomes are 252 dice multiset ids in 0.."
    ):
        state.apply_action(252)
    state.apply_action(game.rules.dice_index([1, 2, 3, 4, 6]))
    before, history = str(state), state.history()
    with pytest.raises(IllegalActionError, match=r"illegal action 31 \(reroll keep \[1 1 1 1 1\]\): keeping every die"):
        state.apply_action(31)
    with pytest.raises(ValueError, match="outside the action space 0..96"):
        state.apply_action(200)
    assert str(state) == before and state.history() == history  # nothing changed
    state.apply_action(0)  # re-roll every die: a chance node
    with pytest.raises(ValueError, match="the outcomes are 252 dice multiset ids"):
        state.apply_action(252)
    with pytest.raises(ValueError, match="player must be 0..0, got 1"):
        state.observation_vector(1)
    mp = pyspiel.load_game("python_jamb", {"players": 2}).new_initial_state()
    with pytest.raises(ValueError, match="the outcomes are the starting player 0..1"):
        mp.apply_action(2)
    assert not np.any(mp.observation_vector(0))  # before the seating: zeros
    from open_spiel.python.observation import make_observation

    observation = make_observation(game)  # OpenSpiel's Python observer, with the segments as named views
    observation.set_from(state, 0)
    np.testing.assert_array_equal(observation.tensor, state.observation_vector(0))
    assert observation.dict["dice_counts"].shape == (6,) and observation.dict["filled"].shape == (52,)
    with pytest.raises(ValueError, match="observers take no parameters"):
        game.make_py_observer(None, {"x": 1})


# ---------------------------------------------------------------- the example
def test_the_mcts_and_expectiminimax_example_runs(pyspiel, capsys):
    spec = importlib.util.spec_from_file_location("example_openspiel_mcts", ROOT / "examples" / "openspiel_mcts.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--games", "1", "--simulations", "2", "--ruleset", "classic_down"]) == 0
    out = capsys.readouterr().out
    assert "mcts   mean score" in out and "random mean score" in out
    assert "endgame: one cell left" in out and "expectiminimax plays" in out
    with pytest.raises(SystemExit) as exit_info:
        example.main(["--ruleset", "nope"])
    assert exit_info.value.code == 2 and "--ruleset: unknown ruleset 'nope'" in capsys.readouterr().err


def test_a_rules_file_edited_since_is_read_again(pyspiel, tmp_path):
    """Before: the game's context was cached by the ruleset string, so a process kept a rules
    file's old rules for every later ``load_game`` of it."""
    rules = tmp_path / "mine.yaml"
    rules.write_text("schema_version: 1\nname: mine\nextends: classic\nrolls: 3\n")
    assert pyspiel.load_game("python_jamb", {"ruleset": str(rules)}).rules.rolls == 3
    rules.write_text("schema_version: 1\nname: mine\nextends: classic\nrolls: 2\n")
    assert pyspiel.load_game("python_jamb", {"ruleset": str(rules)}).rules.rolls == 2
