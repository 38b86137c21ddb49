"""Table tests of which cells are open, per column kind (RULES.md §1, §4, §5)."""

from dataclasses import replace

import numpy as np
import pytest
import yaml

from jamb_env import load_ruleset
from jamb_env.rules import apply_action, layout, maximal_column, score
from jamb_env.rules.kernels import column_fronts
from tests.helpers import announceable, can_reroll, fill, open_cells, sheet

STANDARD = load_ruleset("standard")
ROWS = STANDARD.rows


def cells_in(rules, st, column):
    return {row for col, row in open_cells(rules, st) if col == column}


def write_action(rules, column, row):
    return layout(rules).write_offset + rules.cell(column, row)


def announce_action(rules, column, row):
    lay = layout(rules)
    return lay.announce_offset + int(np.flatnonzero(lay.announce_cells == rules.cell(column, row))[0])


# ------------------------------------------------------------------ front columns
@pytest.mark.parametrize(
    "written,expected",
    [
        ([], {"max", "min"}),
        (["max"], {"sixes", "min"}),
        (["min"], {"max", "trilling"}),
        (["max", "sixes", "fives", "min"], {"fours", "trilling"}),
        (["max", "sixes", "fives", "fours", "threes", "twos", "ones"], {"min"}),
        (
            [
                "max",
                "sixes",
                "fives",
                "fours",
                "threes",
                "twos",
                "ones",
                "min",
                "trilling",
                "straight",
                "full",
                "poker",
            ],
            {"jamb"},
        ),
        (["sixes"], {"max", "min"}),  # (not reachable by play) sixes does not open fives without max
    ],
)
def test_middle(written, expected):
    st = sheet(STANDARD, {("middle", r): 1 for r in written})
    assert cells_in(STANDARD, st, "middle") == expected


@pytest.mark.parametrize(
    "written,expected",
    [
        ([], {"ones", "jamb"}),
        (["ones", "twos"], {"threes", "jamb"}),
        (["jamb", "poker"], {"ones", "full"}),
        (list(ROWS[:11]), {"poker", "jamb"}),  # the top front passed the middle
        (list(ROWS[:12]), {"jamb"}),  # both fronts meet
    ],
)
def test_updown(written, expected):
    st = sheet(STANDARD, {("updown", r): 1 for r in written})
    assert cells_in(STANDARD, st, "updown") == expected


def test_fronts_of_each_kind():
    rows = STANDARD.rows
    assert column_fronts("down", rows) == [list(range(13))]
    assert column_fronts("up", rows) == [list(range(12, -1, -1))]
    assert column_fronts("middle", rows) == [[6, 5, 4, 3, 2, 1, 0], [7, 8, 9, 10, 11, 12]]


# ------------------------------------------------------------------ roll-limited columns
def test_hand_only_after_first_roll():
    st1 = sheet(STANDARD, roll=1)
    st2 = sheet(STANDARD, roll=2)
    assert cells_in(STANDARD, st1, "hand") == set(ROWS)
    assert cells_in(STANDARD, st2, "hand") == set()


def test_hand_only_left_forbids_rerolls():
    others = [c for c in STANDARD.columns if c != "hand"]
    st = sheet(STANDARD, fill(STANDARD, others))
    assert cells_in(STANDARD, st, "hand") == set(ROWS)
    assert not can_reroll(STANDARD, st)  # no cell would be writable after roll 2


def test_free2_rolls_one_and_two():
    master = load_ruleset("master")
    assert cells_in(master, sheet(master, roll=1, dice=[1, 2, 3, 4, 5, 6]), "free2") == set(master.rows)
    assert cells_in(master, sheet(master, roll=2, dice=[1, 2, 3, 4, 5, 6]), "free2") == set(master.rows)
    assert cells_in(master, sheet(master, roll=3, dice=[1, 2, 3, 4, 5, 6]), "free2") == set()
    others = [c for c in master.columns if c != "free2"]
    st = sheet(master, fill(master, others), roll=1, dice=[1, 2, 3, 4, 5, 6])
    assert can_reroll(master, st)
    st = sheet(master, fill(master, others), roll=2, dice=[1, 2, 3, 4, 5, 6])
    assert not can_reroll(master, st)  # roll 3 would leave nothing writable


# ------------------------------------------------------------------ announce and answer
def test_answer_closed_without_obligation():
    st = sheet(STANDARD)
    assert cells_in(STANDARD, st, "answer") == set()


def test_answer_obligation_after_announced_write_turn():
    from jamb_env.rules import start_turn

    st = sheet(STANDARD, dice=[5, 5, 5, 5, 2])
    st, _ = apply_action(STANDARD, st, announce_action(STANDARD, "announce", "poker"))
    st, _ = apply_action(STANDARD, st, write_action(STANDARD, "announce", "poker"))
    st = start_turn(STANDARD, st, [6, 6, 6, 6, 1])
    assert open_cells(STANDARD, st) == {("answer", "poker")}  # the only write
    assert announceable(STANDARD, st) == set()  # nothing may be announced
    assert can_reroll(STANDARD, st)
    st, pts = apply_action(STANDARD, st, write_action(STANDARD, "answer", "poker"))
    assert pts == 64 and st.answer_due == -1


def test_answer_plays_free_once_announce_is_full():
    st = sheet(STANDARD, fill(STANDARD, ["announce"]) | {("answer", "ones"): 1})
    assert cells_in(STANDARD, st, "answer") == set(ROWS) - {"ones"}


def test_pending_obligation_comes_first_even_when_announce_is_full():
    st = sheet(STANDARD, fill(STANDARD, ["announce"]), answer_due="full")
    assert open_cells(STANDARD, st) == {("answer", "full")}


def test_answer_not_forced(tmp_path):
    path = tmp_path / "loose.yaml"
    path.write_text(
        yaml.safe_dump(
            {"schema_version": 1, "name": "loose", "extends": "standard", "options": {"answer_forced": False}}
        )
    )
    loose = load_ruleset(path)
    st = sheet(loose, answer_due="full")
    assert cells_in(loose, st, "answer") == {"full"}  # open during this turn only
    assert ("free", "ones") in open_cells(loose, st)  # not an obligation
    assert announceable(loose, st)


def test_forced_announcement_generalises():
    """Only announce (and answer, closed while announce has cells) left: announce first."""
    others = [c for c in STANDARD.columns if c not in ("announce", "answer")]
    st = sheet(STANDARD, fill(STANDARD, others))
    assert open_cells(STANDARD, st) == set()
    assert not can_reroll(STANDARD, st)
    assert announceable(STANDARD, st) == {("announce", r) for r in ROWS}


# ------------------------------------------------------------------ nokaut
NOKAUT = load_ruleset("nokaut")


def test_mandatory_opens_when_the_others_are_full():
    others = [c for c in NOKAUT.columns if c != "mandatory"]
    st = sheet(NOKAUT, fill(NOKAUT, others[:-1]))
    assert cells_in(NOKAUT, st, "mandatory") == set()
    st = sheet(NOKAUT, fill(NOKAUT, others))
    assert cells_in(NOKAUT, st, "mandatory") == set(NOKAUT.rows)


def test_maximal_column_rules():
    rules = NOKAUT
    written = fill(rules, rules.columns, value=10)
    written[("hand", "ones")] = 0  # hand is not one of the first six columns
    written[("mandatory", "ones")] = 4
    written[("free", "twos")] = 0  # free is: maximal twos becomes 0
    written[("down", "min")] = 6  # min takes the lowest
    st = sheet(rules, written)
    values, filled = maximal_column(rules, st)
    assert filled == (1 << 13) - 1
    assert values[rules.rows.index("ones")] == 10
    assert values[rules.rows.index("twos")] == 0
    assert values[rules.rows.index("min")] == 6
    # a row not written in every played column is not credited yet
    del written[("mandatory", "jamb")]
    values, filled = maximal_column(rules, sheet(rules, written))
    assert not filled >> 12 & 1 and values[12] == 0


# ------------------------------------------------------------------ after_row (003's eighth column)
def test_after_row(tmp_path):
    path = tmp_path / "eight.yaml"
    six = load_ruleset("six_dice")
    path.write_text(
        yaml.safe_dump(
            {"schema_version": 1, "name": "eight", "extends": "six_dice", "columns": list(six.columns) + ["after_row"]}
        )
    )
    rules = load_ruleset(path)
    others = [c for c in rules.columns if c != "after_row"]
    written = fill(rules, others, rows=["ones", "jamb"]) | {("free", "max"): 20}
    st = sheet(rules, written, dice=[1, 2, 3, 4, 5, 6])
    assert cells_in(rules, st, "after_row") == {"ones", "jamb"}


# ------------------------------------------------------------------ last turn with 5 rolls
def test_klasik_last_turn_has_five_rolls():
    rules = load_ruleset("klasik")
    written = fill(rules, ["down", "free", "up"]) | fill(rules, ["announce"], rules.rows[:-1])
    st = sheet(rules, written, dice=[1, 2, 3, 4, 6])
    st, _ = apply_action(rules, st, announce_action(rules, "announce", "jamb"))
    for roll in (2, 3, 4, 5):
        st, _ = apply_action(rules, st, 0, dice=[6, 6, 6, 6, 6] if roll == 5 else [1, 1, 2, 3, 4])
        assert st.roll == roll
    assert not can_reroll(rules, st)
    before = score(rules, st)
    _, pts = apply_action(rules, st, write_action(rules, "announce", "jamb"))
    assert pts == 80 and before == 0  # every other cell holds 0: no bonus, no difference


def test_klasik_earlier_turns_have_three_rolls():
    rules = load_ruleset("klasik")
    assert can_reroll(rules, sheet(rules, roll=2)) and not can_reroll(rules, sheet(rules, roll=3))


# ------------------------------------------------------------------ copy (003's opponent column)
COPY = load_ruleset("six_dice_copy")
SIX = [1, 2, 3, 4, 5, 6]


def test_copy_offers_only_the_row_just_written():
    assert cells_in(COPY, sheet(COPY, dice=SIX), "copy") == set()  # the game's first turn: no row offered
    assert cells_in(COPY, sheet(COPY, dice=SIX, copy_row="full"), "copy") == {"full"}
    st = sheet(COPY, {("copy", "full"): 40}, dice=SIX, copy_row="full")
    assert cells_in(COPY, st, "copy") == set()  # written already: nothing to copy into
    # open at every roll, like free
    assert cells_in(COPY, sheet(COPY, dice=SIX, roll=3, copy_row="ones"), "copy") == {"ones"}


def test_copy_is_free_once_every_other_column_is_full():
    others = [c for c in COPY.columns if c != "copy"]
    written = fill(COPY, others) | {("copy", "ones"): 0}
    st = sheet(COPY, written, dice=SIX)  # no row offered, only copy cells left: no dead end
    assert cells_in(COPY, st, "copy") == set(COPY.rows) - {"ones"}
    del written[("down", "jamb")]
    st = sheet(COPY, written, dice=SIX, roll=1)
    assert cells_in(COPY, st, "copy") == set()


def test_a_solitaire_write_offers_its_row_to_the_copy_column():
    st = sheet(COPY, dice=[6, 6, 6, 6, 2, 3])
    st, _ = apply_action(COPY, st, write_action(COPY, "free", "sixes"))
    assert st.copy_row == COPY.rows.index("sixes")
    classic = load_ruleset("classic")
    st, _ = apply_action(classic, sheet(classic), write_action(classic, "free", "ones"))
    assert st.copy_row == -1  # without a copy column nothing is offered


def test_copy_why_illegal_names_the_offered_row():
    from jamb_env.rules import why_illegal

    st = sheet(COPY, dice=SIX, copy_row="full")
    assert why_illegal(COPY, st, write_action(COPY, "copy", "full")) is None
    reason = why_illegal(COPY, st, write_action(COPY, "copy", "ones"))
    assert "copy column offers only full" in reason
    assert "offers no row" in why_illegal(COPY, sheet(COPY, dice=SIX), write_action(COPY, "copy", "ones"))


def test_copy_row_is_validated_in_states():
    from jamb_env.rules import validate_state

    with pytest.raises(ValueError, match="copy_row"):
        validate_state(COPY, replace(sheet(COPY, dice=SIX), copy_row=13))
    classic = load_ruleset("classic")
    with pytest.raises(ValueError, match="not a row of a copy column"):
        validate_state(classic, sheet(classic, copy_row="ones"))


def test_copy_row_is_in_the_observation_only_with_a_copy_column():
    from jamb_env.engine.observation import encoder

    enc = encoder(COPY, True)
    seg = enc.segments["copy_row"]
    assert seg.size == COPY.num_rows
    obs = enc.encode(sheet(COPY, dice=SIX, copy_row="poker"))
    assert obs[seg.slice].tolist() == [float(r == "poker") for r in COPY.rows]
    assert encoder(load_ruleset("six_dice"), True).segments["copy_row"].size == 0


# ------------------------------------------------------------------ 003's variation: second, oddeven
VARIATION = load_ruleset("six_dice_variation")


def test_second_is_written_right_after_roll_two_only():
    assert cells_in(VARIATION, sheet(VARIATION, dice=SIX, roll=1), "second") == set()
    assert cells_in(VARIATION, sheet(VARIATION, dice=SIX, roll=2), "second") == set(VARIATION.rows)
    assert cells_in(VARIATION, sheet(VARIATION, dice=SIX, roll=3), "second") == set()


def test_second_alone_forces_a_reroll_then_a_write():
    others = [c for c in VARIATION.columns if c != "second"]
    written = fill(VARIATION, others) | fill(VARIATION, ["second"], VARIATION.rows[1:])
    st = sheet(VARIATION, written, dice=SIX, roll=1)
    assert open_cells(VARIATION, st) == set() and can_reroll(VARIATION, st)  # roll 1: re-roll is the only way
    st = sheet(VARIATION, written, dice=SIX, roll=2)
    assert open_cells(VARIATION, st) == {("second", "ones")}
    assert not can_reroll(VARIATION, st)  # roll 3 would leave nothing writable (no dead end)
    # with another open cell, the re-roll past roll 2 stays legal
    del written[("free", "jamb")]
    assert can_reroll(VARIATION, sheet(VARIATION, written, dice=SIX, roll=2))


def test_second_needs_two_rolls(tmp_path):
    from jamb_env import RulesetError

    path = tmp_path / "one_roll.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "name": "one_roll",
                "extends": "six_dice",
                "rolls": 1,
                "options": {"last_turn_rolls": 1},
                "columns": ["free", "second"],
            }
        )
    )
    with pytest.raises(RulesetError, match="'second' is written only after roll 2"):
        load_ruleset(path)


@pytest.mark.parametrize(
    "written,expected",
    [
        # rows 1st, 3rd, ... (ones, threes, fives, max, straight, full, jamb) from the top,
        # 2nd, 4th, ... (twos, fours, sixes, min, trilling, poker) from the bottom
        ([], {"ones", "poker"}),
        (["ones"], {"threes", "poker"}),
        (["poker"], {"ones", "trilling"}),
        (["ones", "threes", "fives", "max", "straight", "full"], {"jamb", "poker"}),
        (["ones", "threes", "fives", "max", "straight", "full", "jamb"], {"poker"}),
        (["poker", "trilling", "min", "sixes", "fours"], {"ones", "twos"}),
    ],
)
def test_oddeven_two_fronts(written, expected):
    st = sheet(VARIATION, {("oddeven", r): 0 for r in written}, dice=SIX)
    assert cells_in(VARIATION, st, "oddeven") == expected


def test_six_dice_eight_has_after_row():
    rules = load_ruleset("six_dice_eight")
    assert rules.columns[-1] == "after_row" and rules.num_cells == 104
