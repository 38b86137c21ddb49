"""Which cells are open on hand-built classic sheets (RULES.md §1, §4)."""

import numpy as np
import pytest

from jamb_env import IllegalActionError
from jamb_env.rules import apply_action, layout, legal_mask, new_game, score, start_turn
from tests.helpers import announceable, can_reroll, fill, open_cells, sheet

ROWS = (
    "ones",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "max",
    "min",
    "trilling",
    "straight",
    "full",
    "poker",
    "jamb",
)


def test_empty_sheet_roll1(classic):
    st = sheet(classic)
    cells = open_cells(classic, st)
    assert ("down", "ones") in cells and ("down", "twos") not in cells
    assert ("up", "jamb") in cells and ("up", "poker") not in cells
    assert all(("free", r) in cells for r in ROWS)
    assert not any(c == "announce" for c, _ in cells)  # only through an announcement
    assert announceable(classic, st) == {("announce", r) for r in ROWS}
    assert can_reroll(classic, st)


def test_down_and_up_follow_their_order(classic):
    written = {("down", "ones"): 3, ("down", "twos"): 4, ("up", "jamb"): 0, ("up", "poker"): 0}
    cells = open_cells(classic, sheet(classic, written))
    assert ("down", "threes") in cells and ("down", "fours") not in cells
    assert ("up", "full") in cells and ("up", "straight") not in cells


def test_full_columns_have_no_open_cell(classic):
    written = fill(classic, ["down"]) | {("free", "ones"): 2}
    cells = open_cells(classic, sheet(classic, written))
    assert not any(c == "down" for c, _ in cells)
    assert ("free", "ones") not in cells and ("free", "twos") in cells


def test_announce_only_after_roll_one(classic):
    st = sheet(classic, roll=2)
    assert announceable(classic, st) == set()
    st = sheet(classic, roll=1, announced=("announce", "poker"))
    assert announceable(classic, st) == set()  # once per turn
    assert open_cells(classic, st) == {("announce", "poker")}  # the turn must write it
    assert can_reroll(classic, st)  # re-rolls remain


def test_announce_and_write_at_once(classic):
    rules = classic
    st = sheet(rules, dice=[5, 5, 5, 5, 2])
    lay = layout(rules)
    ann = lay.announce_offset + int(np.flatnonzero(lay.announce_cells == rules.cell("announce", "poker"))[0])
    st, pts = apply_action(rules, st, ann)
    assert pts == 0 and st.announced == rules.cell("announce", "poker")
    st, pts = apply_action(rules, st, lay.write_offset + rules.cell("announce", "poker"))
    assert pts == 60 and st.roll == 0 and st.turn == 1


def test_forced_announcement_when_only_announce_is_left(classic):
    """004: with the other three columns full, announce before any re-roll."""
    written = fill(classic, ["down", "up", "free"])
    st = sheet(classic, written)
    assert open_cells(classic, st) == set()
    assert not can_reroll(classic, st)
    assert announceable(classic, st) == {("announce", r) for r in ROWS}
    # after the announcement the re-rolls come back
    lay = layout(classic)
    st, _ = apply_action(classic, st, lay.announce_offset)
    assert can_reroll(classic, st)
    assert open_cells(classic, st) == {("announce", "ones")}


def test_no_reroll_after_last_roll(classic):
    st = sheet(classic, roll=3)
    assert not can_reroll(classic, st)
    assert open_cells(classic, st)


def test_keep_all_and_non_canonical_holds_are_illegal(classic):
    st = sheet(classic, dice=[2, 2, 3, 5, 5])
    mask = legal_mask(classic, st)
    assert not mask[31]  # keep all
    assert mask[0b00001] and not mask[0b00010]  # keep one 2: leftmost only
    with pytest.raises(IllegalActionError, match="leftmost"):
        apply_action(classic, st, 0b00010, dice=[1, 1, 1, 1])


def test_last_turn_roll_limit(classic):
    written = fill(classic, ["down", "up", "free"]) | fill(classic, ["announce"], ROWS[:-1])
    st = sheet(classic, written)
    assert classic.num_cells - st.turn == 1
    assert announceable(classic, st) == {("announce", "jamb")}
    st, _ = apply_action(classic, st, layout(classic).announce_offset + 12)
    st, _ = apply_action(classic, st, 0, dice=[6, 6, 6, 6, 6])
    st, _ = apply_action(classic, st, 0, dice=[6, 6, 6, 6, 6])
    assert st.roll == 3 and not can_reroll(classic, st)  # classic: 3 rolls in the last turn too
    st, pts = apply_action(classic, st, layout(classic).write_offset + classic.cell("announce", "jamb"))
    assert pts == 80 and st.turn == 52


def test_write_records_value_even_if_zero(classic):
    st = sheet(classic, dice=[1, 2, 3, 4, 6])
    st, pts = apply_action(classic, st, layout(classic).write_offset + classic.cell("free", "jamb"))
    assert pts == 0 and st.filled[2] >> 12 & 1


def test_bonus_credited_with_last_upper_cell(classic):
    """Upper 3+8+12+16+20 = 59 so far; the sixes cell (18) makes 77 and brings +30."""
    written = {
        ("free", "ones"): 3,
        ("free", "twos"): 8,
        ("free", "threes"): 12,
        ("free", "fours"): 16,
        ("free", "fives"): 20,
    }
    st = sheet(classic, written, dice=[6, 6, 6, 1, 2])
    assert score(classic, st) == 59
    st, pts = apply_action(classic, st, layout(classic).write_offset + classic.cell("free", "sixes"))
    assert pts == 18 + 30
    assert score(classic, st) == 59 + 18 + 30


def test_no_bonus_below_threshold(classic):
    written = {("free", r): v for r, v in zip(ROWS[:5], (1, 2, 3, 4, 5))}
    st = sheet(classic, written, dice=[6, 6, 6, 6, 6])
    st, pts = apply_action(classic, st, layout(classic).write_offset + classic.cell("free", "sixes"))
    assert pts == 30  # 15 + 30 = 45 < 60: no bonus


def test_difference_credited_with_last_of_ones_max_min(classic):
    written = {("free", "ones"): 3, ("free", "max"): 26}
    st = sheet(classic, written, dice=[1, 1, 1, 2, 4])  # min = 9
    st, pts = apply_action(classic, st, layout(classic).write_offset + classic.cell("free", "min"))
    assert pts == 3 * (26 - 9)  # min itself is not added (RULES.md §2)


def test_negative_difference(classic):
    written = {("free", "ones"): 2, ("free", "min"): 25}
    st = sheet(classic, written, dice=[1, 1, 2, 3, 4])  # max = 11
    st, pts = apply_action(classic, st, layout(classic).write_offset + classic.cell("free", "max"))
    assert pts == 2 * (11 - 25)


def test_full_classic_sheet_total_by_hand(classic):
    """A complete hand-built sheet.

    Every column: ones 3, twos 6, threes 9, fours 12, fives 15, sixes 18 (upper 63, bonus
    30), max 28, min 8 (difference 3 * 20 = 60), trilling 28, straight 45, full 0, poker
    64, jamb 0 (lower 137). Column = 63 + 30 + 60 + 137 = 290; four columns = 1160.
    """
    values = dict(zip(ROWS, (3, 6, 9, 12, 15, 18, 28, 8, 28, 45, 0, 64, 0)))
    written = {(c, r): v for c in classic.columns for r, v in values.items()}
    st = sheet(classic, written)
    assert classic.column_score(values) == 290
    assert score(classic, st) == 1160


def test_transitions_do_not_mutate_their_input(classic):
    st = start_turn(classic, new_game(classic), [1, 2, 3, 4, 5])
    before = (st.values.copy(), st.filled.copy(), st.dice.copy())
    apply_action(classic, st, layout(classic).write_offset + classic.cell("free", "straight"))
    assert (st.values == before[0]).all() and (st.filled == before[1]).all() and (st.dice == before[2]).all()


def test_straight_written_after_reroll(classic):
    st = start_turn(classic, new_game(classic), [1, 2, 3, 4, 4])
    st, _ = apply_action(classic, st, 0b01111, dice=[5])  # keep 1 2 3 4, roll one die
    assert list(st.dice) == [1, 2, 3, 4, 5] and st.roll == 2
    _, pts = apply_action(classic, st, layout(classic).write_offset + classic.cell("free", "straight"))
    assert pts == 35


def test_reroll_needs_the_right_number_of_dice(classic):
    st = start_turn(classic, new_game(classic), [1, 2, 3, 4, 4])
    with pytest.raises(ValueError, match="expected 1 dice"):
        apply_action(classic, st, 0b01111, dice=[5, 6])
    with pytest.raises(ValueError, match="1..6"):
        apply_action(classic, st, 0b01111, dice=[7])
