"""Game and match states as input (jamb_env/env.py set_state, jamb_env/rules/game.py
validate_state / check_indices, transition.stream_bounds, the match doors, the OpenSpiel
state string): exactly the states a game reaches are admitted, and no hand-built state makes
a compiled kernel read outside its arrays."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from jamb_env import JambEnv, load_ruleset
from jamb_env import rules as core
from jamb_env.rules import stream_bounds
from tests.helpers import playable_presets, random_legal


class _Marker:
    """Unpickling it creates the file ``path`` (a stand-in for any code a pickle can run)."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def played(name: str, steps: int, seed: int = 0, illegal_action: str = "raise") -> JambEnv:
    """An env after ``steps`` random legal moves (fewer if the game ends first)."""
    env = JambEnv(name, illegal_action=illegal_action)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if env.game.turn >= env.ruleset.num_cells:
            break
        env.step(random_legal(env, rng))
    return env


def first_write(env: JambEnv, rng) -> None:
    """Play random legal moves until a cell has been written."""
    turn = env.game.turn
    while env.game.turn == turn:
        env.step(random_legal(env, rng))


SCALAR_FIELDS = ("dice_index", "roll", "announced", "answer_due", "turn", "copy_row", "jokers", "pure")


def _game(**changes):
    return lambda s: replace(s, game=replace(s.game, **changes))


#: a state of a game at its first roll, changed -> what set_state's ValueError says
#: (a position out of range: test_a_stream_position_no_game_reaches_is_refused)
BAD_STATES = {
    "announced 999": (_game(announced=999), "announce cell"),
    "answer_due 50": (_game(answer_due=50), "answer_due"),
    "turn 5 with no cell written": (_game(turn=5), "cells are written"),
    "roll 9": (_game(roll=9), "roll"),
    "a score the sheet does not hold": (lambda s: replace(s, score=12345), "sheet scores"),
    "a stream cut short": (lambda s: replace(s, stream=s.stream[:10]), "stream"),
    "another ruleset's state": (lambda s: _other_ruleset_state(), "belongs to ruleset 'klasik'"),
}


def _other_ruleset_state():
    other = JambEnv("klasik")
    other.reset(seed=0)
    return other.get_state()


@pytest.mark.parametrize("bad", BAD_STATES)
def test_set_state_validates_before_applying(bad):
    env = JambEnv()
    env.reset(seed=0)
    obs = env.observe()
    change, says = BAD_STATES[bad]
    with pytest.raises(ValueError, match=says):
        env.set_state(change(env.get_state()))
    assert (env.observe() == obs).all() and env.score == 0  # unchanged


def test_a_forged_openspiel_state_string_runs_no_code(tmp_path):
    import base64
    import pickle

    pyspiel = pytest.importorskip("pyspiel")
    from jamb_env.openspiel import load_state

    game = pyspiel.load_game("python_jamb", {"ruleset": "classic_down"})
    state = game.new_initial_state()
    state.apply_action(5)  # a first roll
    state.apply_action(0)  # re-roll every die
    marker = tmp_path / "ran"
    forged = (
        state.serialize().split("__dict__=")[0] + "__dict__=" + base64.b64encode(pickle.dumps(_Marker(marker))).decode()
    )
    again = game.deserialize_state(forged)
    assert not marker.exists() and str(again) == str(state) and again.history() == state.history()
    text = pyspiel.serialize_game_and_state(game, state).split("__dict__=")[0] + forged.split("\n")[2]
    g2, s2 = load_state(text)
    assert not marker.exists() and str(g2) == str(game) and str(s2) == str(state)
    for bad, why in (
        ("history=0:5\nmove_number=1\n", "player -1 is to move"),
        ("history=-1:999\nmove_number=1\n", "chance outcome 999 is not possible"),
        ("history=-1:5\nmove_number=7\n", "move_number='7'"),
        ("5\n5\n", "not a serialized python_jamb state"),
    ):
        with pytest.raises(ValueError, match=why):
            game.deserialize_state(bad)
    with pytest.raises(ValueError, match="reads python_jamb games"):
        load_state(
            pyspiel.serialize_game_and_state(
                pyspiel.load_game("tic_tac_toe"), pyspiel.load_game("tic_tac_toe").new_initial_state()
            )
        )


def test_load_state_reads_no_rules_file_a_text_names_unless_asked_and_game_strings_read_back(tmp_path):
    """A serialized game naming a rules file (``/etc/passwd``, a file of secrets) is refused
    unread by default; a rules path OpenSpiel's game string cannot hold (``,`` ``=`` ``(``
    ``)``: its states would never load back) is refused when the game is made."""
    pyspiel = pytest.importorskip("pyspiel")
    from jamb_env.openspiel import load_state

    secret = tmp_path / "secret.yaml"
    secret.write_text("api_token: hunter2\n")
    text = "\n".join(["[Meta]", "Version: 1", "", "[Game]", f"python_jamb(ruleset={secret})", "[State]", ""])
    with pytest.raises(ValueError, match="load_state reads presets only") as caught:
        load_state(text)
    assert "api_token" not in str(caught.value)
    for name in ("a,b.yaml", "a=b.yaml", "a(b).yaml"):
        with pytest.raises(ValueError, match="game string cannot hold"):
            pyspiel.load_game("python_jamb", {"ruleset": str(tmp_path / name)})


@pytest.mark.parametrize("players, outcome", [(1, -1), (1, 10_000), (2, 7), (2, -3)])
def test_a_chance_outcome_out_of_range_has_no_name(players, outcome):
    pyspiel = pytest.importorskip("pyspiel")
    import jamb_env.openspiel  # noqa: F401  (registers python_jamb)

    game = pyspiel.load_game(
        "python_jamb", {"ruleset": "classic_down" if players == 1 else "standard", "players": players}
    )
    with pytest.raises(
        ValueError, match=f"chance outcome {outcome} is outside 0.."
    ):  # was a name (dice 6 6 6 6 6, player_7) or IndexError
        game.new_initial_state().action_to_string(pyspiel.PlayerId.CHANCE, outcome)


@pytest.mark.parametrize("name", playable_presets())
def test_every_position_random_play_reaches_lies_within_the_stream_bounds(name):
    """The bounds are the engine's: at every step of random games the stream position is
    inside them, and a game can always finish within the stream from the upper bound."""
    rules = load_ruleset(name)
    env = JambEnv(name, illegal_action="raise")
    rng = np.random.default_rng(1)
    for g in range(3):
        env.reset(seed=g)
        while True:
            s = env.get_state()
            low, high = stream_bounds(rules, s.game)
            assert low <= s.position <= high <= len(s.stream), (name, s.game.turn, s.game.roll, s.position, low, high)
            if s.done:
                break
            env.step(random_legal(env, rng))


@pytest.mark.parametrize("name", ["classic", "joly", "jnn"])
def test_a_game_restored_at_its_upper_bound_finishes_inside_the_stream(name):
    """From the most dice a state can have drawn, rolling every die at every chance still
    never needs a die beyond the stream (the kernels read it unchecked)."""
    rules = load_ruleset(name)
    env = played(name, 7, seed=2)
    s = env.get_state()
    high = stream_bounds(rules, s.game)[1]
    env.set_state(replace(s, position=high))
    lay = core.layout(rules)
    while not env.get_state().done:
        mask = env.action_masks()
        action = (
            0 if mask[0] else (lay.basket if lay.basket >= 0 and mask[lay.basket] else int(np.flatnonzero(mask)[-1]))
        )
        env.step(action)
        assert env.get_state().position <= len(s.stream)


@pytest.mark.parametrize("position", ["end", 775, "past_high", "below_low", 2.0, True])
def test_a_stream_position_no_game_reaches_is_refused(position):
    env = played("classic", 0)
    s = env.get_state()
    low, high = stream_bounds(env.ruleset, s.game)
    value = {"end": len(s.stream), "past_high": high + 1, "below_low": low - 1}.get(position, position)
    with pytest.raises(ValueError, match="state.position"):
        env.set_state(replace(s, position=value))
    assert env.get_state().position == s.position  # nothing changed


def test_a_stream_that_is_not_integer_faces_is_refused():
    env = played("classic", 3)
    s = env.get_state()
    half = s.stream.astype(np.float64)
    half[-1] = 1.5  # read as die 1 before
    for stream in (
        s.stream.astype(np.float64),
        half,
        s.stream.astype(bool),
        s.stream[:-1],
        np.where(s.stream == 6, 7, s.stream),
    ):
        with pytest.raises(ValueError, match="state.stream"):
            env.set_state(replace(s, stream=stream))


def test_obligations_no_write_made_are_refused():
    """answer_due / copy_row at turn 0, an answer due in a written answer cell or in a row
    no announce column has written, a copy row no column has written."""
    rng = np.random.default_rng(0)
    env = played("standard", 0)
    rules = env.ruleset
    s = env.get_state()
    assert s.game.turn == 0
    lay = core.layout(rules)
    assert lay.answer_column >= 0
    with pytest.raises(ValueError, match="before any cell is written"):
        env.set_state(replace(s, game=replace(s.game, answer_due=0)))
    env = played("standard", 60, seed=3)
    s = env.get_state()
    bits = rules.row_bits[s.game.filled]
    written_answer = [r for r in range(rules.num_rows) if bits[lay.answer_column, r]]
    if written_answer:
        with pytest.raises(ValueError, match="names the written cell"):
            env.set_state(replace(s, game=replace(s.game, answer_due=written_answer[0])))
    never = [
        r
        for r in range(rules.num_rows)
        if not bits[lay.answer_column, r] and not any(bits[c, r] for c in lay.announce_columns)
    ]
    if never:
        with pytest.raises(ValueError, match="no announce column"):
            env.set_state(replace(s, game=replace(s.game, answer_due=never[0])))
    copy = played("six_dice_copy", 0)
    c = copy.get_state()
    with pytest.raises(ValueError, match="before any cell is written"):
        copy.set_state(replace(c, game=replace(c.game, copy_row=0)))
    first_write(copy, rng)
    c = copy.get_state()
    unwritten = [r for r in range(copy.ruleset.num_rows) if not copy.ruleset.row_bits[c.game.filled][:, r].any()]
    with pytest.raises(ValueError, match="copy_row"):
        copy.set_state(replace(c, game=replace(c.game, copy_row=unwritten[0])))
    with pytest.raises(ValueError, match="copy_row = -1 after a write"):
        copy.set_state(replace(c, game=replace(c.game, copy_row=-1)))


def test_roll_zero_mid_game_and_an_impure_first_roll_are_refused():
    env = played("jnn", 0)
    s = env.get_state()
    assert s.game.roll == 1 and s.game.pure == 1
    with pytest.raises(ValueError, match="pure = 0 at roll 1"):
        env.set_state(replace(s, game=replace(s.game, pure=0)))
    blank = replace(s.game, roll=0, dice=np.zeros_like(s.game.dice), dice_index=-1, pure=0)
    with pytest.raises(ValueError, match="roll = 0 mid-game"):
        env.set_state(replace(s, game=blank))


def test_a_pure_flag_after_a_hold_is_the_state_a_full_reroll_reaches():
    """jnn: roll 2 flagged pure is what re-rolling every die gives (the record keeps no
    holds), so it is accepted, and its legal actions are the core's for that state."""
    env = played("jnn", 0)
    rules = env.ruleset
    env.step(0)  # re-roll every die: a pure roll 2
    assert env.game.roll == 2 and env.game.pure == 1
    held = played("jnn", 0)
    holds = np.flatnonzero(held.action_masks()[1 : core.layout(rules).num_holds]) + 1  # keep at least one die
    held.step(int(holds[0]))
    assert held.game.pure == 0
    forged = held.get_state()
    forged = replace(forged, game=replace(forged.game, pure=1))
    held.set_state(forged)
    assert held.game.pure == 1 and np.array_equal(held.action_masks(), core.legal_mask(rules, forged.game))


def test_done_mid_game_only_where_an_illegal_action_can_end_a_game():
    env = played("classic", 5)
    s = env.get_state()
    with pytest.raises(ValueError, match="done = True mid-game"):
        env.set_state(replace(s, done=True))
    term = played("classic", 5, illegal_action="terminate")
    t = term.get_state()
    term.set_state(replace(t, done=True))  # what an illegal action leaves: over, reset() for a new game
    with pytest.raises(RuntimeError, match="ended"):
        term.step(int(np.flatnonzero(term.legal_mask())[0]) if term.legal_mask().any() else 0)
    over = played("classic_down", 200)
    o = over.get_state()
    assert o.done
    with pytest.raises(ValueError, match="True once the sheet is full"):
        over.set_state(replace(o, done=False))


@pytest.mark.parametrize(
    "field,value",
    [
        ("dice_index", 10**9),
        ("dice_index", -5),
        ("roll", 99),
        ("announced", 10**6),
        ("answer_due", 40),
        ("copy_row", -7),
        ("turn", 10**4),
        ("roll", 1.5),
    ],
)
def test_a_hand_built_state_out_of_range_gets_an_error_from_every_core_door(field, value):
    """No kernel sees an index it has not been shown to hold: legal_mask, apply_action,
    why_illegal, writable_bits, can_reroll refuse the state (ValueError); the sheet's
    score reads only values and filled, so it is not asked about the dice or the turn."""
    rules = load_ruleset("classic")
    st = played("classic", 2).game
    bad = replace(st, **{field: value})
    for call in (
        lambda: core.legal_mask(rules, bad),
        lambda: core.apply_action(rules, bad, 0, dice=[1] * rules.dice),
        lambda: core.why_illegal(rules, bad, 0),
        lambda: core.writable_bits(rules, bad, 1),
        lambda: core.game.can_reroll(rules, bad),
    ):
        with pytest.raises(ValueError):
            call()


@pytest.mark.parametrize(
    "change", ["values_shape", "filled_shape", "dice_shape", "filled_bits", "dice_face", "values_float"]
)
def test_hand_built_arrays_of_the_wrong_shape_or_range_are_refused(change):
    rules = load_ruleset("classic")
    st = played("classic", 2).game
    C, R = st.values.shape
    bad = {
        "values_shape": replace(st, values=np.zeros((C, R + 3), np.int16)),
        "filled_shape": replace(st, filled=np.zeros(C + 1, np.int64)),
        "dice_shape": replace(st, dice=np.zeros(9, np.int8)),
        "filled_bits": replace(st, filled=np.full(C, 1 << 40, np.int64)),
        "dice_face": replace(st, dice=np.full(rules.dice, 9, np.int8)),
        "values_float": replace(st, values=st.values.astype(np.float32)),
    }[change]
    with pytest.raises(ValueError):
        core.legal_mask(rules, bad)
    if change.startswith(("values", "filled")):  # what the score reads
        with pytest.raises(ValueError):
            core.score(rules, bad)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=hs.sampled_from(["classic", "standard", "jnn", "joly", "six_dice_copy"]),
    steps=hs.integers(0, 80),
    field=hs.sampled_from(SCALAR_FIELDS + ("position", "cell", "die", "stream")),
    delta=hs.integers(-3, 3),
    seed=hs.integers(0, 2**16),
)
def test_set_state_fuzz_refuses_or_plays_on_safely(name, steps, field, delta, seed):
    """A reachable state with one field nudged: set_state either refuses it (ValueError)
    or the game it restores plays on to the end with legal moves, inside its stream, its
    score the sheet's, never an exception of another kind."""
    env = played(name, steps, seed=seed)
    s = env.get_state()
    g = s.game
    rng = np.random.default_rng(seed)
    if field in SCALAR_FIELDS:
        state = replace(s, game=replace(g, **{field: int(getattr(g, field)) + delta}))
    elif field == "position":
        state = replace(s, position=s.position + delta)
    elif field == "cell":
        values = g.values.copy()
        c, r = rng.integers(values.shape[0]), rng.integers(values.shape[1])
        values[c, r] += delta
        state = replace(s, game=replace(g, values=values), score=s.score + delta)
    elif field == "die":
        dice = g.dice.copy()
        dice[rng.integers(len(dice))] += delta
        state = replace(s, game=replace(g, dice=dice))
    else:
        stream = s.stream.copy()
        stream[rng.integers(len(stream))] += delta
        state = replace(s, stream=stream)
    try:
        env.set_state(state)
    except ValueError:
        assert env.get_state().position == s.position and np.array_equal(env.game.values, g.values)  # untouched
        return
    rules = env.ruleset
    while not env.get_state().done:
        now = env.get_state()
        assert stream_bounds(rules, now.game)[0] <= now.position <= stream_bounds(rules, now.game)[1] <= len(now.stream)
        core.validate_state(rules, now.game, solitaire=True)
        env.step(random_legal(env, rng))
    end = env.get_state()
    assert end.score == core.score(rules, end.game) and core.is_over(rules, end.game)


@pytest.mark.parametrize(
    "change", ["num_players", "to_move_high", "to_move_negative", "first", "owner_shape", "owner_value", "sheet_dice"]
)
def test_a_forged_match_state_is_refused_by_every_match_door(change):
    """The match's fields index the kernels' arrays (sheets by player, owner by cell): a
    forged one gets a ValueError from start_turn, legal_mask, apply_action, scores."""
    from jamb_env.rules import match as M

    rules = load_ruleset("classic")
    sep = M.new_match(rules, 2)
    shared = M.new_match(rules, 2, "shared")
    bad = {
        "num_players": replace(sep, num_players=5),
        "to_move_high": replace(sep, to_move=5),
        "to_move_negative": replace(sep, to_move=-1),
        "first": replace(sep, first=7),
        "owner_shape": replace(shared, owner=np.full((1, 1), -1, np.int8)),
        "owner_value": replace(shared, owner=np.full(shared.owner.shape, 9, np.int8)),
        "sheet_dice": replace(sep, sheets=(replace(sep.sheets[0], dice=np.zeros(1, np.int8)), sep.sheets[1])),
    }[change]
    for call in (
        lambda: M.start_turn(rules, bad, [1, 2, 3, 4, 5]),
        lambda: M.legal_mask(rules, bad),
        lambda: M.apply_action(rules, bad, 0, [1, 2, 3, 4, 5]),
        lambda: M.scores(rules, bad),
    ):
        with pytest.raises(ValueError):
            call()


def test_start_turn_refuses_a_sheet_whose_dice_array_cannot_hold_the_roll():
    rules = load_ruleset("classic")
    st = replace(core.new_game(rules), dice=np.zeros(1, np.int8))
    for check in (True, False):
        with pytest.raises(ValueError, match="not a state"):
            core.start_turn(rules, st, [6, 6, 6, 6, 6], check=check)


def test_a_state_of_other_rules_of_the_same_name_is_refused(tmp_path):
    """Before (J82): states and replays were matched by the ruleset's name only, so a rules file
    named ``classic`` with other bonuses took a classic game's state (and replayed it)."""
    from jamb_env import JambEnv
    from jamb_env.replay.records import RecordError, replay
    from jamb_env.rules import RULES_DIR

    mine = tmp_path / "mine.yaml"
    mine.write_text((RULES_DIR / "classic.yaml").read_text().replace("jamb_bonus: 50", "jamb_bonus: 500"))
    other = JambEnv(str(mine))
    assert other.ruleset.name == "classic" and other.ruleset.digest != JambEnv("classic").ruleset.digest
    classic = JambEnv("classic")
    classic.reset(seed=1)
    other.reset(seed=1)
    with pytest.raises(ValueError, match="other rules named 'classic'"):
        other.set_state(classic.get_state())
    from agents import load
    from agents.evaluation.solitaire import play_game

    record = play_game(load("greedy"), JambEnv("classic"), 3, record=True)["record"]
    with pytest.raises(RecordError, match="other rules of that name"):
        list(replay(record, env=other))
