"""RULES.md §7: every worked example that a shipped preset covers is a test."""

import pytest

from jamb_env import load_ruleset
from tests.helpers import playable_presets

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
