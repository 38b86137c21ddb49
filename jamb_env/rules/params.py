"""The ruleset as the rule kernels read it, and the two packings of the rules: the
parameter vector's indices, :class:`RuleArrays` (built by
:func:`jamb_env.rules.kernels.rule_arrays`, cached as ``Ruleset.arrays``), the key of a
dice multiset (:func:`face_weight`) and Joly's jokers left in one integer (the ``JOKER_*``
constants; :func:`fixed_joker_left`, :func:`free_jokers_left`, :func:`baskets_left`).

:mod:`jamb_env.rules.kernels` re-exports every name.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jamb_env.rules._jit import kernel

# ---------------------------------------------------------------------------- parameters
# indices into the int64 parameter vector ``RuleArrays.P``
(
    P_N,  # dice
    P_C,  # played columns
    P_R,  # rows
    P_ROLLS,  # rolls per turn
    P_LAST_ROLLS,  # rolls in the last turn
    P_NUM_CELLS,
    P_ANSWER_COL,  # the answer column or -1
    P_MANDATORY_COL,
    P_AFTER_ROW_COL,
    P_ANSWER_FORCED,
    P_NUM_HOLDS,  # 2**n
    P_ANN_OFFSET,  # first announce action
    P_WRITE_OFFSET,  # first write action
    P_NUM_ACTIONS,
    P_NUM_ANN,  # announce cells
    P_BONUS_THR,
    P_BONUS_PTS,
    P_BONUS_PER,
    P_BONUS_STRICT,
    P_UPPER_BITS,  # bitmask of the upper rows
    P_ONES,  # difference rows (-1 unless ones, max and min are all rows)
    P_MAX,
    P_MIN,
    P_MIN_ROW,  # the min row (-1 if none): maximal takes its lowest value
    P_HAS_MAXIMAL,
    P_KMAX,  # max rolls of any turn
    P_M,  # dice multisets
    P_COPY_COL,  # the copy (opponent) column or -1
    P_JOKERS,  # 1 with Joly's jokers
    P_JOKER_OFFSET,  # first joker action (= the end of the writes; the joker actions follow)
    P_ANNOUNCE_PURE,  # 1: a pure roll may be written in an announce column unannounced
    P_DIFF_CLAMP,  # 1: difference = ones x max(max - min, 0)
) = range(32)
N_PARAMS = 32

# Joly's jokers left in a game, packed in one int (``GameState.jokers``): bit v - 1 for the
# fixed joker valued v (1..6), the free jokers ``J`` counted in bits 6-7, the baskets
# ``K`` in bits 8-9 (RULES.md §6).
JOKER_FREE_SHIFT = 6
JOKER_BASKET_SHIFT = 8
JOKERS_FULL = 0x3F | (2 << JOKER_FREE_SHIFT) | (2 << JOKER_BASKET_SHIFT)
#: Every bit the packing uses (a packed value has no other bit set).
JOKER_BITS = 0x3F | (3 << JOKER_FREE_SHIFT) | (3 << JOKER_BASKET_SHIFT)


class RuleArrays(NamedTuple):
    """A ruleset as the kernels read it (read-only arrays, one object per ruleset).

    Attributes:
        P: int64 ``(N_PARAMS,)`` scalar parameters (``P_*`` indices).
        opens: int64 ``(C,)`` how each played column opens its cells (``OPEN_*``).
        last_roll: int64 ``(C,)`` the last roll after which the column may be written.
        front_down: int64 ``(C,)`` rows of the column's front that runs downward (its
            open cell: the topmost empty one of them); 0 if none.
        front_up: int64 ``(C,)`` rows of the front that runs upward (open: the bottommost
            empty one); 0 if none.
        zeroing: bool ``(C,)`` columns whose 0 in a row zeroes maximal's cell.
        ann_cols: int64 announce columns. ann_cells: int64 ``(A,)`` their cells.
        hold_canonical: bool ``(M, 2**n)`` the legal (canonical) keep-masks per multiset.
        key_to_index: int64 multiset index of a face-count key (DiceTables).
        cell_values: int16 ``(K, M, C*R)`` points of each cell for each multiset and roll.
        is_upper: bool ``(R,)`` upper rows (ones..sixes).
        first_roll: int64 ``(C,)`` the first roll after which the column may be written.
        sorted_dice: int64 ``(M, n)`` the sorted faces of each multiset.
        die_canonical: bool ``(M, n)`` the die at each sorted position is the leftmost of
            its face (a joker names that die only: no two joker actions of one effect).
    """

    P: np.ndarray
    opens: np.ndarray
    last_roll: np.ndarray
    front_down: np.ndarray
    front_up: np.ndarray
    zeroing: np.ndarray
    ann_cols: np.ndarray
    ann_cells: np.ndarray
    hold_canonical: np.ndarray
    key_to_index: np.ndarray
    cell_values: np.ndarray
    is_upper: np.ndarray
    first_roll: np.ndarray
    sorted_dice: np.ndarray
    die_canonical: np.ndarray


@kernel(inline=True)
def face_weight(face, n):
    """A die showing ``face`` (1..6) adds ``(n + 1) ** (face - 1)`` to the key of its
    multiset of ``n`` dice: the key is the face counts read as a number in base ``n + 1``,
    the one definition :func:`set_dice` and :class:`~jamb_env.rules.tables.DiceTables`
    (``key_to_index``) share."""
    w = 1
    for _ in range(face - 1):
        w *= n + 1
    return w


@kernel(inline=True)
def fixed_joker_left(jokers, value):
    """The fixed joker valued ``value`` (1..6) is left in the packed ``jokers`` (1, else 0)."""
    return (jokers >> (value - 1)) & 1


@kernel(inline=True)
def free_jokers_left(jokers):
    """Free jokers ``J`` left in the packed ``jokers`` (0..2)."""
    return (jokers >> JOKER_FREE_SHIFT) & 3


@kernel(inline=True)
def baskets_left(jokers):
    """Baskets ``K`` left in the packed ``jokers`` (0..2)."""
    return (jokers >> JOKER_BASKET_SHIFT) & 3
