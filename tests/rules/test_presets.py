"""Every preset: the RULES.md §7 worked examples it covers, shape facts, a full hand-built
sheet, and the ruleset's scoring API refusing bad arguments."""

import pytest

from jamb_env import list_rulesets, load_ruleset
from jamb_env.rules import score
from tests.helpers import playable_presets, sheet

U = ("ones", "twos", "threes", "fours", "fives", "sixes")


# ---------------------------------------------------------------- RULES.md §7
def test_slovenian_examples():
    r = load_ruleset("slovenian")
    assert r.score("trilling", [5, 5, 5, 1, 2]) == 25
    assert r.score("straight", [1, 2, 3, 4, 5]) == 35
    assert r.score("straight", [2, 3, 4, 5, 6]) == 40
    assert r.score("full", [6, 6, 2, 2, 2]) == 48
    assert r.score("jamb", [6, 6, 6, 6, 6]) == 80


def test_slovenian6_max_min():
    r = load_ruleset("slovenian6")
    assert r.score("max", [2, 4, 5, 5, 6, 6]) == 26
    assert r.score("min", [1, 1, 1, 2, 4, 6]) == 9


@pytest.mark.parametrize("roll,value", [(1, 60), (2, 50), (3, 40)])
def test_yu48_straight_by_roll(roll, value):
    r = load_ruleset("yu48")
    assert r.score("straight", [1, 2, 3, 4, 5], roll=roll) == value
    assert r.score("straight", [6, 5, 4, 3, 2], roll=roll) == value  # small and large alike


@pytest.mark.parametrize(
    "preset", ["standard", "standard6", "klasik", "master", "nokaut", "nokaut6", "joly_nojokers", "six_dice"]
)
def test_straights_66_56_46(preset):
    r = load_ruleset(preset)
    dice = [1, 2, 3, 4, 5] + [6] * (r.dice - 5)
    assert [r.score("straight", dice, roll=k) for k in (1, 2, 3)] == [66, 56, 46]
    if r.max_rolls == 5:
        assert r.score("straight", dice, roll=4) == r.score("straight", dice, roll=5) == 46  # like roll 3
    if "hand" in r.columns:
        assert r.score("straight", dice, roll=1, column="hand") == 66


@pytest.mark.parametrize("preset", ["joly", "joly_nojokers"])
def test_upper_bonus_examples(preset):
    joly = load_ruleset(preset)
    cells = dict(zip(U, (6, 10, 15, 12, 10, 12)))  # upper sum 65 (six ones count in Joly)
    assert joly.column_score(cells) == 105  # 65 + 30 + (65 - 60) x 2
    yu48 = load_ruleset("yu48")
    cells = dict(zip(U, (2, 8, 12, 12, 10, 18)))  # upper sum 62
    assert yu48.column_score(cells) == 92


def test_six_dice_bonus_is_strict():
    r = load_ruleset("six_dice")
    assert r.column_score(dict(zip(U, (3, 6, 6, 12, 15, 18)))) == 60  # exactly 60: no bonus
    assert r.column_score(dict(zip(U, (4, 6, 6, 12, 15, 18)))) == 61 + 30


def test_every_preset_loads():
    assert list_rulesets(playable=False) == list_rulesets()
    assert load_ruleset("joly").jokers and not load_ruleset("joly_nojokers").jokers


@pytest.mark.parametrize("preset", ["joly", "joly_nojokers"])
def test_joly_rows(preset):
    r = load_ruleset(preset)
    assert r.score("threes", [3] * 6) == 18
    assert r.score("three_by_two", [3, 3, 3, 5, 5, 5]) == 54  # 24 + 30
    assert r.score("jamb6", [2] * 6) == 72  # 12 + 60
    assert r.score("jamb", [2] * 6) == 60  # five of the six


def test_master_three_by_two():
    r = load_ruleset("master")
    assert r.score("three_by_two", [2, 2, 4, 4, 6, 6]) == 44
    assert r.score("three_by_two", [1, 1, 2, 2, 3, 4]) == 0
    assert "trilling" not in r.rows


FIVE_DICE = [p for p in playable_presets() if load_ruleset(p).dice == 5]
SIX_DICE = [p for p in playable_presets() if load_ruleset(p).dice == 6]


@pytest.mark.parametrize("preset", FIVE_DICE)
@pytest.mark.parametrize(
    "dice,row,value",
    [
        ((6, 6, 6, 5, 3), "sixes", 18),
        ((6, 6, 6, 5, 3), "fives", 5),
        ((6, 6, 6, 4, 4), "full", 56),
        ((5, 5, 5, 5, 2), "poker", 60),
    ],
)
def test_any_five_dice_preset(preset, dice, row, value):
    rules = load_ruleset(preset)
    assert rules.score(row, dice) == value
    assert rules.score(row, dice[::-1]) == value  # dice in any order


def test_classic_examples(classic):
    assert classic.score("trilling", [4, 4, 4, 1, 2]) == 22
    assert classic.score("twos", [2, 2, 2, 4, 6]) == 6


@pytest.mark.parametrize("preset", playable_presets())
@pytest.mark.parametrize(
    "cells,difference",
    [({"ones": 3, "max": 26, "min": 9}, 51), ({"ones": 5, "max": 30, "min": 5}, 125)],
)
def test_difference_any_column(preset, cells, difference):
    rules = load_ruleset(preset)
    # ones' own 3 or 5 points count as upper; the difference is the rest
    assert rules.column_score(cells) - cells["ones"] == difference


@pytest.mark.parametrize("preset", SIX_DICE)
def test_six_dice_upper_rows(preset):
    rules = load_ruleset(preset)
    assert rules.score("threes", [3, 3, 3, 3, 5, 5]) == 12
    assert rules.score("fives", [3, 3, 3, 3, 5, 5]) == 10
    assert rules.score("fives", [5, 5, 5, 5, 2, 3]) == 20
    six_threes = 18 if rules.name in ("joly", "joly_nojokers") else 15
    assert rules.score("threes", [3] * 6) == six_threes


# ---------------------------------------------------------------- shapes
@pytest.mark.parametrize(
    "preset,dice,turns,columns,last",
    [
        ("classic", 5, 52, 4, 3),
        ("yu48", 5, 48, 4, 3),
        ("slovenian", 5, 52, 4, 3),
        ("slovenian6", 6, 52, 4, 3),
        ("standard", 5, 104, 8, 5),
        ("standard6", 6, 104, 8, 5),
        ("klasik", 5, 52, 4, 5),
        ("master", 6, 104, 8, 5),
        ("nokaut", 5, 117, 9, 5),
        ("nokaut6", 6, 117, 9, 5),
        ("joly_nojokers", 6, 112, 8, 5),
        ("joly", 6, 112, 8, 5),
        ("six_dice", 6, 91, 7, 3),
    ],
)
def test_preset_shapes(preset, dice, turns, columns, last):
    """RULES.md §5: dice, turns (= playable cells), played columns, last-turn rolls."""
    r = load_ruleset(preset)
    assert (r.dice, r.num_turns, len(r.columns), r.last_turn_rolls, r.rolls) == (dice, turns, columns, last, 3)


def test_six_dice_row_order():
    assert load_ruleset("six_dice").rows[8:10] == ("straight", "trilling")


# ---------------------------------------------------------------- full sheets by hand
STANDARD_ROWS = U + ("max", "min", "trilling", "straight", "full", "poker", "jamb")
STANDARD_COLUMN = dict(zip(STANDARD_ROWS, (3, 6, 9, 12, 15, 18, 28, 8, 38, 56, 0, 64, 0)))
MANDATORY_COLUMN = dict(zip(STANDARD_ROWS, (5, 10, 15, 20, 25, 30, 30, 5, 38, 66, 58, 64, 80)))

#: preset -> (rows, one column's values written in every column, other columns, the sheet's total)
FULL_SHEETS = {
    # upper 64, bonus 30; difference 4 x (27 - 7) = 80; straight 50 + full 0 + poker 64 + jamb 55 = 169:
    # column 343; four columns 1372
    "yu48": (
        U + ("max", "min", "straight", "full", "poker", "jamb"),
        (4, 6, 9, 12, 15, 18, 27, 7, 50, 0, 64, 55),
        {},
        1372,
    ),
    # upper 58: no bonus; difference 2 x (29 - 6) = 46; lower 25 + 40 + 48 + 60 + 80 = 253: 357 x 4
    "slovenian": (STANDARD_ROWS, (2, 4, 9, 16, 15, 12, 29, 6, 25, 40, 48, 60, 80), {}, 1428),
    # upper 105, bonus 30; difference 5 x (30 - 5) = 125; lower 265: 525 x 4
    "slovenian6": (STANDARD_ROWS, (5, 10, 15, 20, 25, 30, 30, 5, 28, 35, 58, 64, 80), {}, 2100),
    # upper 63, bonus 30; difference 3 x 20 = 60; lower 38 + 56 + 0 + 64 + 0 = 158: 311 x 8
    "standard": (STANDARD_ROWS, tuple(STANDARD_COLUMN.values()), {}, 2488),
    # upper 21; difference 1 x (20 - 10) = 10; lower 23 + 46 + 37 + 44 + 55 = 205: 236 x 8
    "standard6": (STANDARD_ROWS, (1, 2, 3, 4, 5, 6, 20, 10, 23, 46, 37, 44, 55), {}, 1888),
    # upper 80, bonus 30; difference 0 x 25 = 0; lower 0 + 66 + 58 + 0 + 0 = 124: 234 x 4
    "klasik": (STANDARD_ROWS, (0, 8, 12, 16, 20, 24, 30, 5, 0, 66, 58, 0, 0), {}, 936),
    # upper 42; difference 2 x (25 - 12) = 26; lower 3x2 41 (111666) + 46 + 0 + 0 + 80 = 167: 235 x 8
    "master": (
        U + ("max", "min", "three_by_two", "straight", "full", "poker", "jamb"),
        (2, 4, 6, 8, 10, 12, 25, 12, 41, 46, 0, 0, 80),
        {},
        1880,
    ),
    # upper 65, bonus 30 + 2 x 5 = 40; difference 6 x (30 - 6) = 144; lower 0 + 66 + 0 + 0 + 0 + J6 96 = 162:
    # 411 x 8
    "joly_nojokers": (
        U + ("max", "min", "three_by_two", "straight", "full", "poker", "jamb", "jamb6"),
        (6, 12, 18, 4, 10, 15, 30, 6, 0, 66, 0, 0, 0, 96),
        {},
        3288,
    ),
    # upper 60: not more than 60, no bonus; difference 3 x 17 = 51; lower straight 66 + trilling 38: 215 x 7
    "six_dice": (
        U + ("max", "min", "straight", "trilling", "full", "poker", "jamb"),
        (3, 6, 6, 12, 15, 18, 26, 9, 66, 38, 0, 0, 0),
        {},
        1505,
    ),
    # Eight columns as standard's (311 each: 2488). Mandatory: upper 105 + 30, difference 5 x 25 = 125,
    # lower 38 + 66 + 58 + 64 + 80 = 306: 566. Maximal: best per row, min the lowest: upper 105 + 30,
    # difference 5 x (30 - 5) = 125; full and jamb are 0 in the first six columns, so 0 in maximal;
    # lower 38 + 66 + 0 + 64 + 0 = 168: 428. Total 2488 + 566 + 428 = 3482.
    "nokaut": (STANDARD_ROWS, tuple(STANDARD_COLUMN.values()), {"mandatory": MANDATORY_COLUMN}, 3482),
    "nokaut6": (STANDARD_ROWS, tuple(STANDARD_COLUMN.values()), {"mandatory": MANDATORY_COLUMN}, 3482),
}


@pytest.mark.parametrize("preset", FULL_SHEETS)
def test_a_full_sheet_by_hand(preset):
    rows, values, per_column, total = FULL_SHEETS[preset]
    r = load_ruleset(preset)
    written = {}
    for col in r.columns:
        col_values = per_column.get(col, dict(zip(rows, values)))
        assert set(col_values) == set(r.rows)
        written.update({(col, row): v for row, v in col_values.items()})
    assert score(r, sheet(r, written)) == total


# ---------------------------------------------------------------- the scoring API's arguments
def test_score_api_errors(classic):
    with pytest.raises(ValueError, match="5 dice"):
        classic.score("ones", [1, 2, 3])
    with pytest.raises(ValueError, match="1..6"):
        classic.score("ones", [0, 1, 2, 3, 4])
    with pytest.raises(ValueError, match="1..6"):
        classic.score("ones", [1, 2, 3, 4, 7])
    with pytest.raises(ValueError, match="unknown row"):
        classic.score("yahtzee", [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="roll"):
        classic.score("ones", [1, 2, 3, 4, 5], roll=4)
    with pytest.raises(ValueError, match="unknown column"):
        classic.score("ones", [1, 2, 3, 4, 5], column="hand")
    with pytest.raises(ValueError, match="unknown row"):
        classic.column_score({"yahtzee": 50})
