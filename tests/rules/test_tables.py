"""Dice tables: multisets, holds, hold transitions, row values (RULES.md §1, §3)."""

import itertools
import math

import numpy as np
import pytest

from jamb_env.rules.tables import RowScoring, dice_tables, row_value


@pytest.mark.parametrize("n,expected", [(5, 252), (6, 462)])
def test_multiset_count(n, expected):
    t = dice_tables(n)
    assert t.num_multisets == expected == math.comb(n + 5, 5)
    assert (t.counts.sum(axis=1) == n).all()
    assert (np.diff(t.sorted_dice, axis=1) >= 0).all()
    for m in range(0, expected, 37):
        assert t.index(t.sorted_dice[m][::-1]) == m


@pytest.mark.parametrize("n", [5, 6])
def test_transitions_are_distributions(n):
    t = dice_tables(n)
    assert np.allclose(t.transition.sum(axis=1), 1.0)
    # keeping everything leads to that multiset with certainty
    full = np.flatnonzero(t.sub_size == n)
    for s in full[:20]:
        m = t.index([f for f in range(1, 7) for _ in range(t.sub_counts[s][f - 1])])
        assert t.transition[s, m] == 1.0


def test_transition_matches_enumeration():
    """Keep (6, 6), roll three dice: compare with brute-force enumeration of 216 rolls."""
    t = dice_tables(5)
    s = t.sub_index([6, 6])
    expected = np.zeros(t.num_multisets)
    for roll in itertools.product(range(1, 7), repeat=3):
        expected[t.index((6, 6) + roll)] += 1 / 216
    assert np.allclose(t.transition[s], expected)


@pytest.mark.parametrize("n", [5, 6])
def test_canonical_holds_are_distinct_and_exclude_keep_all(n):
    t = dice_tables(n)
    for m in range(t.num_multisets):
        masks = np.flatnonzero(t.hold_canonical[m])
        subs = t.hold_sub[m, masks]
        assert len(set(subs)) == len(subs)  # each distinct hold once
        assert (1 << n) - 1 not in masks  # keep-all is not a re-roll
        # every distinct proper sub-multiset has exactly one canonical mask
        n_distinct = math.prod(int(c) + 1 for c in t.counts[m]) - 1
        assert len(masks) == n_distinct


def test_canonical_mask_is_leftmost():
    t = dice_tables(5)
    m = t.index([2, 2, 3, 5, 5])
    # keep one 2: position 0 (mask 1) is canonical, position 1 (mask 2) is not
    assert t.hold_canonical[m, 0b00001] and not t.hold_canonical[m, 0b00010]
    # keep one 5: position 3 (mask 8), not position 4
    assert t.hold_canonical[m, 0b01000] and not t.hold_canonical[m, 0b10000]


S = RowScoring()


@pytest.mark.parametrize(
    "dice,row,value",
    [
        ((4, 4, 4, 4, 1), "trilling", 22),  # exactly three dice count
        ((6, 6, 6, 6, 6), "poker", 64),  # five of a kind is a poker
        ((6, 6, 6, 6, 6), "full", 0),  # ... but not a full (default)
        ((6, 6, 6, 6, 6), "jamb", 80),
        ((1, 2, 3, 4, 6), "straight", 0),
        ((1, 2, 3, 4, 5), "straight", 35),
        ((2, 3, 4, 5, 6), "straight", 45),
        ((1, 1, 2, 2, 3), "full", 0),
        ((3, 3, 3, 2, 2), "full", 43),
        ((1, 1, 1, 1, 1), "max", 5),
        ((6, 6, 6, 6, 6), "min", 30),
        ((1, 2, 3, 4, 5), "ones", 1),
    ],
)
def test_row_values(dice, row, value):
    counts = np.bincount(np.array(dice) - 1, minlength=6)
    assert row_value(row, counts, 2, S) == value


def test_full_option_five_of_a_kind():
    counts = np.bincount(np.array([6] * 5) - 1, minlength=6)
    assert row_value("full", counts, 2, RowScoring(full_allows_five_of_a_kind=True)) == 60


def test_six_dice_rows():
    def v(row, dice, **kw):
        return row_value(row, np.bincount(np.array(dice) - 1, minlength=6), 2, RowScoring(**kw))

    assert v("max", [2, 4, 5, 5, 6, 6]) == 26  # RULES.md §7 (slovenian6)
    assert v("min", [1, 1, 1, 2, 4, 6]) == 9
    assert v("trilling", [2, 2, 2, 5, 5, 5], trilling_bonus=20) == 35  # higher triple
    assert v("straight", [1, 2, 3, 4, 5, 6]) == 45  # 1-6 is a large straight
    assert v("full", [5, 5, 5, 5, 2, 2]) == 49  # best choice of 5
    assert v("three_by_two", [3, 3, 3, 5, 5, 5], three_by_two_bonus=20) == 44
    assert v("three_by_two", [2, 2, 4, 4, 6, 6], three_by_two_bonus=20) == 44
    assert v("three_by_two", [2, 2, 2, 2, 5, 5], three_by_two_bonus=20) == 38
    assert v("three_by_two", [4] * 6, three_by_two_bonus=20) == 44
    assert v("three_by_two", [1, 1, 1, 2, 2, 3], three_by_two_bonus=20) == 0
    assert v("jamb6", [4] * 6) == 84
    assert v("threes", [3] * 6) == 15
    assert v("threes", [3] * 6, upper_dice=6) == 18
