"""The rules of Jamb, written once (RULES.md §1-4, §6): compiled kernels over one game's arrays.

Every rule that decides what is legal and what is credited lives in this module and the
three it re-exports (``kernels.X`` names each of them):

* :mod:`jamb_env.rules.columns`: :data:`COLUMN_KINDS`, each column kind as one table entry
  (how its cells open, the rolls a write is allowed after, whether a 0 in it zeroes
  ``maximal``, what it needs), read by :func:`writable`;
* :mod:`jamb_env.rules.params`: the parameter vector's ``P_*`` indices, :class:`RuleArrays`
  and the two packings: a dice multiset's key (``face_weight``) and Joly's jokers left in
  one integer (``fixed_joker_left``, ``free_jokers_left``, ``baskets_left``);
* :mod:`jamb_env.rules.scoring`: :func:`bonus`, :func:`bonus_credited`, :func:`difference`,
  :func:`column_parts` (upper, bonus, difference, lower of a column), :func:`maximal` (the
  derived column), the sheet's parts and the shared sheet's award (:func:`column_award`);
* here: the open cells (:func:`writable`), the turn (:func:`max_rolls`,
  :func:`is_last_turn`), the legal-action mask (:func:`legal_mask`, the no-dead-end rule
  included), Joly's jokers (:func:`joker_index`, :func:`joker_mask`, :func:`use_joker`,
  :func:`is_basket`), the dice (:func:`set_dice`), :func:`write` (record a cell and return
  the points it credits) and the answer and copy obligations (:func:`obligations`).

The kernels take a game as small arrays (``values`` int16 ``(C, R)``, ``filled`` int64
``(C,)`` row bitmasks, and scalars) and a ruleset's :class:`RuleArrays` (built once per
ruleset by :func:`rule_arrays`). They are the formulas; the order a game applies them in
is the one transition of :mod:`jamb_env.rules.transition`, which the single-game core
(:mod:`jamb_env.rules.game`, one slot) and the engine of every env
(:mod:`jamb_env.engine.batch`, N slots) both run, so the two cannot disagree.

To add a column kind: one :class:`ColumnKind` entry in :data:`COLUMN_KINDS` (reusing an
``OPEN_*`` rule), or, for a new way of opening cells, an ``OPEN_*`` code with its branch
in :func:`writable`; then a preset or a test ruleset and tests (docs/presets.md).
"""

# ruff: noqa: F403, F405 - the names of the three modules above are this module's too
from __future__ import annotations

import numpy as np

from jamb_env.rules._jit import kernel
from jamb_env.rules.columns import *  # re-exported: kernels.X names every rule
from jamb_env.rules.params import *
from jamb_env.rules.scoring import *


@kernel(inline=True)
def topmost(bits):
    """The lowest set bit of ``bits`` (the topmost row), 0 if none."""
    return bits & -bits


@kernel(inline=True)
def bottommost(bits):
    """The highest set bit of ``bits`` (the bottommost row), 0 if none."""
    while bits & (bits - 1):
        bits &= bits - 1
    return bits


@kernel(inline=True)
def others_full(filled, c, skip_a, skip_b, C, full):
    """Every played column but ``c``, ``skip_a`` and ``skip_b`` (-1: none) is full."""
    for o in range(C):
        if o != c and o != skip_a and o != skip_b and filled[o] != full:
            return False
    return True


@kernel(inline=True)
def writable(filled, roll, announced, answer_due, copy_row, pure, ra, out):
    """Per played column, the bitmask of rows that may be written after roll ``roll``
    (RULES.md §1, §4) into ``out`` int64 ``(C,)``.

    An announced cell is the only writable one; so is the answer cell while the answer
    obligation is forced; otherwise each column opens cells by its kind. ``copy_row``:
    the row the ``copy`` column offers this turn (the previous write's, RULES.md §6) or -1.
    ``pure``: the roll is pure (every die rolled); with ``announce_pure`` its announce
    columns then take any empty cell, unless only announce cells are left (``jnn``)."""
    P = ra.P
    C = P[P_C]
    R = P[P_R]
    full = (1 << R) - 1
    for c in range(C):
        out[c] = 0
    if announced >= 0:
        out[announced // R] = 1 << (announced % R)
        return
    if answer_due >= 0 and P[P_ANSWER_FORCED]:
        out[P[P_ANSWER_COL]] = 1 << answer_due
        return
    for c in range(C):
        empty = full & ~filled[c]
        if empty == 0 or roll > ra.last_roll[c] or roll < ra.first_roll[c]:
            continue
        how = ra.opens[c]
        if how == OPEN_FRONT:
            out[c] = topmost(empty & ra.front_down[c]) | bottommost(empty & ra.front_up[c])
        elif how == OPEN_ANY:
            out[c] = empty
        elif how == OPEN_ANSWER:
            announce_full = True
            for a in ra.ann_cols:
                if filled[a] != full:
                    announce_full = False
            if announce_full:
                out[c] = empty
            elif answer_due >= 0:  # not forced: open during this turn only
                out[c] = empty & (1 << answer_due)
        elif how == OPEN_LAST:
            if others_full(filled, c, P[P_AFTER_ROW_COL], -1, C, full):
                out[c] = empty
        elif how == OPEN_COPY:
            if others_full(filled, c, P[P_AFTER_ROW_COL], P[P_MANDATORY_COL], C, full):
                out[c] = empty  # nothing else to copy into: played like free (no dead end)
            elif copy_row >= 0:
                out[c] = empty & (1 << copy_row)
        elif how == OPEN_AFTER_ROW:
            everywhere = full
            for o in range(C):
                if o != c and o != P[P_MANDATORY_COL]:
                    everywhere &= filled[o]
            out[c] = empty & everywhere
        elif how == OPEN_ANNOUNCED and pure and P[P_ANNOUNCE_PURE]:
            others_open = False
            for o in range(C):
                if ra.opens[o] != OPEN_ANNOUNCED and filled[o] != full:
                    others_open = True
            if others_open:  # only announce cells left: announcing is forced
                out[c] = empty
        # OPEN_ANNOUNCED otherwise: only through an announcement (above)


# ---------------------------------------------------------------------------- the turn
@kernel(inline=True)
def is_last_turn(turn, P):
    """True when the turn starts with exactly one playable cell empty (RULES.md §1)."""
    return P[P_NUM_CELLS] - turn == 1


@kernel(inline=True)
def max_rolls(turn, P):
    """Rolls allowed in a turn that starts with ``turn`` cells written."""
    return P[P_LAST_ROLLS] if is_last_turn(turn, P) else P[P_ROLLS]


@kernel(inline=True)
def answer_forced(answer_due, P):
    """The answer obligation binds this turn (no announcement, only the answer cell)."""
    return answer_due >= 0 and P[P_ANSWER_FORCED] == 1


@kernel(inline=True)
def can_announce(roll, announced, answer_due, P):
    """Announcing is possible right after roll 1, once, outside a forced answer."""
    return roll == 1 and announced < 0 and not answer_forced(answer_due, P)


@kernel(inline=True)
def can_reroll(filled, roll, announced, answer_due, copy_row, turn, ra, bits):
    """A re-roll is legal while rolls remain and some cell stays writable after it
    whatever it keeps (a roll that is not pure; the no-dead-end rule, RULES.md §4).
    ``bits``: int64 ``(C,)`` scratch."""
    if roll < 1 or roll >= max_rolls(turn, ra.P):
        return False
    writable(filled, roll + 1, announced, answer_due, copy_row, 0, ra, bits)
    for c in range(ra.P[P_C]):
        if bits[c] != 0:
            return True
    return False


@kernel(inline=True)
def legal_mask(filled, dice_index, roll, announced, answer_due, copy_row, pure, turn, jokers, ra, bits, mask):
    """The legal actions into ``mask`` bool ``(num_actions,)``: all False before roll 1
    or once the game is over. ``pure``: the roll is pure (every die rolled). ``jokers``:
    the packed jokers left (0 without jokers). ``bits``: int64 ``(C,)`` scratch."""
    P = ra.P
    for a in range(P[P_NUM_ACTIONS]):
        mask[a] = False
    if roll == 0 or turn >= P[P_NUM_CELLS]:
        return
    R = P[P_R]
    if can_reroll(filled, roll, announced, answer_due, copy_row, turn, ra, bits):
        for k in range(P[P_NUM_HOLDS]):
            mask[k] = ra.hold_canonical[dice_index, k]
    if can_announce(roll, announced, answer_due, P):
        for j in range(P[P_NUM_ANN]):
            cell = ra.ann_cells[j]
            if not (filled[cell // R] >> (cell % R)) & 1:
                mask[P[P_ANN_OFFSET] + j] = True
    writable(filled, roll, announced, answer_due, copy_row, pure, ra, bits)
    off = P[P_WRITE_OFFSET]
    for c in range(P[P_C]):
        for r in range(R):
            if (bits[c] >> r) & 1:
                mask[off + c * R + r] = True
    if P[P_JOKERS]:
        joker_mask(dice_index, jokers, ra, mask)


# ---------------------------------------------------------------------------- Joly's jokers
#: The kinds of joker action (:func:`joker_action`).
JOKER_FIXED, JOKER_FREE, JOKER_BASKET = 0, 1, 2


@kernel(inline=True)
def joker_index(kind, value, die, n):
    """The joker layout, written once (RULES.md §6): the action (counted from
    ``P_JOKER_OFFSET``) of a fixed joker valued ``value`` (``JOKER_FIXED``) or a free
    joker set to ``value`` (``JOKER_FREE``) on the die at sorted position ``die``:
    ``(kind * 6 + value - 1) * n + die``; the basket (``JOKER_BASKET``) is ``12 * n``."""
    if kind == JOKER_BASKET:
        return 12 * n
    return (kind * 6 + value - 1) * n + die


@kernel(inline=True)
def joker_action(k, n):
    """The inverse of :func:`joker_index`: action ``k`` as (kind, value 1..6, die); the
    basket is (``JOKER_BASKET``, 0, 0)."""
    if k >= 12 * n:
        return JOKER_BASKET, 0, 0
    kind = k // (6 * n)
    rest = k - kind * 6 * n
    return kind, rest // n + 1, rest % n


@kernel(inline=True)
def joker_mask(dice_index, jokers, ra, mask):
    """The legal joker and basket actions of a started turn into ``mask`` (RULES.md §6).

    Joker actions, from ``P_JOKER_OFFSET``, as :func:`joker_index` lays them out. A joker is legal while it is
    left, on the leftmost die of each face only, and not on a die showing ``v`` already;
    a basket while one is left. Any roll of the turn, before the write."""
    P = ra.P
    n = P[P_N]
    off = P[P_JOKER_OFFSET]
    free = free_jokers_left(jokers)
    for v in range(1, 7):
        fixed = fixed_joker_left(jokers, v)
        for i in range(n):
            if ra.die_canonical[dice_index, i] and ra.sorted_dice[dice_index, i] != v:
                if fixed:
                    mask[off + joker_index(JOKER_FIXED, v, i, n)] = True
                if free > 0:
                    mask[off + joker_index(JOKER_FREE, v, i, n)] = True
    if baskets_left(jokers) > 0:
        mask[off + joker_index(JOKER_BASKET, 0, 0, n)] = True


@kernel(inline=True)
def is_basket(k, P):
    """Joker action ``k`` (counted from ``P_JOKER_OFFSET``) is a basket."""
    return joker_action(k, P[P_N])[0] == JOKER_BASKET


@kernel(inline=True)
def use_joker(k, dice, jokers, ra, faces):
    """Apply joker action ``k`` (counted from ``P_JOKER_OFFSET``; legal): returns the
    jokers left. A joker writes the turn's ``n`` faces after it into ``faces`` (the die
    replaced; unsorted); a basket leaves ``faces`` alone: the caller rolls all ``n`` dice
    again as the turn's roll 1 (RULES.md §6)."""
    n = ra.P[P_N]
    kind, value, die = joker_action(k, n)
    if kind == JOKER_BASKET:
        return jokers - (1 << JOKER_BASKET_SHIFT)
    for b in range(n):
        faces[b] = dice[b]
    faces[die] = value
    if kind == JOKER_FIXED:
        return jokers & ~(1 << (value - 1))
    return jokers - (1 << JOKER_FREE_SHIFT)


# ---------------------------------------------------------------------------- dice
@kernel(inline=True)
def set_dice(faces, dice, P, key_to_index):
    """Sort ``faces`` (n faces 1..6, scratch: sorted in place) into ``dice`` and return
    the multiset index."""
    n = P[P_N]
    for a in range(1, n):  # insertion sort (n <= 6)
        x = faces[a]
        b = a - 1
        while b >= 0 and faces[b] > x:
            faces[b + 1] = faces[b]
            b -= 1
        faces[b + 1] = x
    key = 0
    for a in range(n):
        dice[a] = faces[a]
        key += face_weight(faces[a], n)
    return key_to_index[key]


@kernel(inline=True)
def write(values, filled, roll, dice_index, cell, ra, parts, tmp):
    """Write ``cell`` with the dice ``dice_index`` after roll ``roll``: records its value
    in ``values``/``filled`` and returns (points credited, answer obligation row or -1,
    copy row or -1): what the write passes on to the sheet's next turn in solitaire
    (:func:`obligations` on the writer's own sheet)."""
    P = ra.P
    R = P[P_R]
    c = cell // R
    r = cell % R
    before = column_and_maximal_points(values, filled, c, ra, parts, tmp)
    values[c, r] = ra.cell_values[roll - 1, dice_index, cell]
    filled[c] |= 1 << r
    after = column_and_maximal_points(values, filled, c, ra, parts, tmp)
    due, copy_row = obligations(filled, cell, ra)
    return after - before, due, copy_row


@kernel(inline=True)
def obligations(next_filled, cell, ra):
    """What writing ``cell`` passes on to the next turn's sheet ``next_filled`` (the
    writer's own in solitaire and on the shared sheet, the next player's with separate
    sheets, RULES.md §6): (answer obligation row or -1, copy row or -1)."""
    return answer_obligation(next_filled, cell, ra), copy_obligation(cell, ra)


@kernel(inline=True)
def answer_obligation(answerer_filled, cell, ra):
    """The answer row that writing ``cell`` obliges (RULES.md §1 ``answer``), or -1: a
    write in an announce column obliges the same row of the answer column of the sheet
    ``answerer_filled`` (the writer's own in solitaire, the next player's in the
    multiplayer game, RULES.md §6), if that cell is empty."""
    P = ra.P
    R = P[P_R]
    c = cell // R
    r = cell % R
    ans = P[P_ANSWER_COL]
    if ans >= 0 and not (answerer_filled[ans] >> r) & 1:
        for q in ra.ann_cols:
            if q == c:
                return r
    return -1


@kernel(inline=True)
def copy_obligation(cell, ra):
    """The row the ``copy`` column offers after a write of ``cell`` (RULES.md §6): that
    cell's row when the ruleset has a ``copy`` column, else -1. It goes to the sheet of
    the player who moves next (the writer's own in solitaire and on the shared sheet)."""
    if ra.P[P_COPY_COL] >= 0:
        return cell % ra.P[P_R]
    return -1


def num_joker_actions(n: int) -> int:
    """Joker and basket actions of a ruleset with jokers and ``n`` dice: 6 fixed jokers
    x n dice, 6 values of ``J`` x n dice, 1 basket (:func:`joker_index`)."""
    return int(joker_index(JOKER_BASKET, 0, 0, n)) + 1


def difference_rows(rules) -> tuple[int, int, int] | None:
    """(ones, max, min) row indices when the difference is scored (all three are rows),
    else None."""
    P = rules.arrays.P
    return (int(P[P_ONES]), int(P[P_MAX]), int(P[P_MIN])) if P[P_ONES] >= 0 else None


# ---------------------------------------------------------------------------- building
def rule_arrays(rules) -> RuleArrays:
    """The :class:`RuleArrays` of a :class:`~jamb_env.rules.Ruleset` (read-only arrays;
    use ``rules.arrays``, cached on the ruleset)."""
    from jamb_env.rules.tables import UPPER_ROWS

    C, R, n = len(rules.columns), rules.num_rows, rules.dice
    rows, cols = rules.rows, rules.columns
    kinds = [COLUMN_KINDS[k] for k in cols]
    ann_cols = [c for c, k in enumerate(cols) if COLUMN_KINDS[k].opens == OPEN_ANNOUNCED]
    ann_cells = [c * R + r for c in ann_cols for r in range(R)]
    num_holds = 1 << n

    def find(kind: str) -> int:
        return cols.index(kind) if kind in cols else -1

    P = np.zeros(N_PARAMS, dtype=np.int64)
    P[P_N], P[P_C], P[P_R] = n, C, R
    P[P_ROLLS], P[P_LAST_ROLLS], P[P_NUM_CELLS] = rules.rolls, rules.last_turn_rolls, C * R
    P[P_ANSWER_COL], P[P_MANDATORY_COL], P[P_AFTER_ROW_COL] = find("answer"), find("mandatory"), find("after_row")
    P[P_ANSWER_FORCED] = int(rules.answer_forced)
    P[P_NUM_HOLDS], P[P_ANN_OFFSET], P[P_WRITE_OFFSET] = num_holds, num_holds, num_holds + len(ann_cells)
    P[P_JOKERS], P[P_JOKER_OFFSET] = int(rules.jokers), num_holds + len(ann_cells) + C * R
    P[P_ANNOUNCE_PURE], P[P_DIFF_CLAMP] = int(rules.announce_pure), int(rules.difference_clamp)
    P[P_NUM_ACTIONS], P[P_NUM_ANN] = P[P_JOKER_OFFSET] + (num_joker_actions(n) if rules.jokers else 0), len(ann_cells)
    P[P_BONUS_THR], P[P_BONUS_PTS], P[P_BONUS_PER] = rules.bonus_threshold, rules.bonus_points, rules.bonus_per_point
    P[P_BONUS_STRICT] = int(rules.bonus_strict)
    P[P_UPPER_BITS] = sum(1 << r for r, row in enumerate(rows) if row in UPPER_ROWS)
    has_diff = all(x in rows for x in ("ones", "max", "min"))
    P[P_ONES], P[P_MAX], P[P_MIN] = (rows.index(x) for x in ("ones", "max", "min")) if has_diff else (-1, -1, -1)
    P[P_MIN_ROW] = rows.index("min") if "min" in rows else -1
    P[P_HAS_MAXIMAL] = int("maximal" in rules.derived_columns)
    P[P_KMAX], P[P_M] = rules.max_rolls, rules.tables.num_multisets
    P[P_COPY_COL] = find("copy")
    fronts = np.array([front_masks(k.name, rows) if k.opens == OPEN_FRONT else (0, 0) for k in kinds], dtype=np.int64)
    arrays = RuleArrays(
        P=P,
        opens=np.array([k.opens for k in kinds], dtype=np.int64),
        last_roll=np.array([k.last_write_roll for k in kinds], dtype=np.int64),
        front_down=np.ascontiguousarray(fronts[:, 0]),
        front_up=np.ascontiguousarray(fronts[:, 1]),
        zeroing=np.array([k.zeroes_maximal for k in kinds], dtype=np.bool_),
        ann_cols=np.array(ann_cols, dtype=np.int64),
        ann_cells=np.array(ann_cells, dtype=np.int64),
        hold_canonical=np.ascontiguousarray(rules.tables.hold_canonical, dtype=np.bool_),
        key_to_index=rules.tables.key_to_index.astype(np.int64),
        cell_values=np.ascontiguousarray(rules.cell_values, dtype=np.int16),
        is_upper=np.array([row in UPPER_ROWS for row in rows], dtype=np.bool_),
        first_roll=np.array([k.first_write_roll for k in kinds], dtype=np.int64),
        sorted_dice=rules.tables.sorted_dice.astype(np.int64),
        die_canonical=np.concatenate(
            [
                np.ones((rules.tables.num_multisets, 1), bool),
                np.diff(rules.tables.sorted_dice.astype(np.int64), axis=1) != 0,
            ],
            axis=1,
        ),
    )
    for a in arrays:
        a.flags.writeable = False
    return arrays
