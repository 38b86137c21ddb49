"""The rules of Jamb, written once (RULES.md §1-4): compiled kernels over one game's arrays.

Every rule that decides what is legal and what is credited lives here and only here:

* :data:`COLUMN_KINDS`: each column kind as one table entry (how its cells open, the
  last roll a write is allowed, whether a 0 in it zeroes ``maximal``, what it needs),
  read by :func:`writable`;
* the turn: :func:`max_rolls` and :func:`is_last_turn`;
* the legal-action mask: :func:`legal_mask` (the no-dead-end rule included);
* the dice: :func:`set_dice` (sort and look up the multiset);
* scoring: :func:`bonus`, :func:`difference`, :func:`column_parts` (upper, bonus,
  difference, lower of a column), :func:`maximal` (the derived column) and
  :func:`write` (record a cell and return the points it credits).

The kernels take a game as small arrays (``values`` int16 ``(C, R)``, ``filled`` int64
``(C,)`` row bitmasks, and scalars) and a ruleset's :class:`RuleArrays` (built once per
ruleset by :func:`rule_arrays`). They are the formulas; the order a game applies them in
is the one transition of :mod:`jamb_env.rules.transition`, which the single-game core
(:mod:`jamb_env.rules.game`, one slot) and the engine of every env
(:mod:`jamb_env.engine.batch`, N slots) both run, so the two cannot disagree. The joker layout
(:func:`use_joker`, :func:`is_basket`), the answer and copy obligations
(:func:`obligations`) and the shared sheet's awards (:func:`column_award`) are here too.

To add a column kind: one :class:`ColumnKind` entry in :data:`COLUMN_KINDS` (reusing an
``OPEN_*`` rule), or, for a new way of opening cells, an ``OPEN_*`` code with its branch
in :func:`writable`; then a preset or a test ruleset and tests (docs/presets.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


# ---------------------------------------------------------------------------- column kinds
#: How a column's cells open (the branches of :func:`writable`).
OPEN_FRONT = 0  # the first empty cell along each of the kind's fronts
OPEN_ANY = 1  # any empty cell
OPEN_ANNOUNCED = 2  # only the cell announced right after roll 1
OPEN_ANSWER = 3  # the row of the previous announcement; any once the announce columns are full
OPEN_LAST = 4  # any empty cell once every other column (but after_row) is full
OPEN_AFTER_ROW = 5  # a row once it is written in every other column (but mandatory)
OPEN_NONE = 6  # derived columns: never written
OPEN_COPY = 7  # the row the previous player just wrote; any once the other columns are full

#: No roll limit for writing.
ANY_ROLL = 99


def _fronts_down(rows: Sequence[str]) -> list[list[int]]:
    return [list(range(len(rows)))]


def _fronts_up(rows: Sequence[str]) -> list[list[int]]:
    return [list(range(len(rows) - 1, -1, -1))]


def _fronts_updown(rows: Sequence[str]) -> list[list[int]]:
    return _fronts_down(rows) + _fronts_up(rows)


def _fronts_oddeven(rows: Sequence[str]) -> list[list[int]]:
    # the 1st, 3rd, ... rows from the top; the 2nd, 4th, ... rows from the bottom
    return [list(range(0, len(rows), 2)), list(range(1, len(rows), 2))[::-1]]


def _fronts_middle(rows: Sequence[str]) -> list[list[int]]:
    return [list(range(rows.index("max"), -1, -1)), list(range(rows.index("min"), len(rows)))]


def _needs_max_min(rows: Sequence[str], columns: Sequence[str]) -> str | None:
    if "max" not in rows or "min" not in rows or rows.index("min") != rows.index("max") + 1:
        return "'middle' needs rows 'max' and 'min', with min right after max"
    return None


def _needs_announce(rows: Sequence[str], columns: Sequence[str]) -> str | None:
    return None if "announce" in columns else "'answer' needs an 'announce' column (RULES.md §5)"


def _needs_played(rows: Sequence[str], columns: Sequence[str]) -> str | None:
    if not [c for c in columns if c not in ("mandatory", "after_row", "maximal")]:
        return "'maximal' needs at least one played column"
    return None


@dataclass(frozen=True)
class ColumnKind:
    """One column kind of RULES.md §1, as data.

    Attributes:
        name: the kind's id in ruleset files.
        opens: how its cells open (``OPEN_*``; see :func:`writable`).
        fronts: for ``OPEN_FRONT``: rows -> the row sequences whose first empty cell is open.
        last_write_roll: the last roll of a turn after which it may be written.
        first_write_roll: the first roll of a turn after which it may be written.
        zeroes_maximal: a 0 written in it makes the ``maximal`` cell of that row 0 (002).
        derived: computed from the played columns, no write actions (``maximal``).
        requires: (rows, columns) -> None, or what the ruleset lacks for this kind.
        rule: the rule in words.
    """

    name: str
    opens: int
    rule: str
    fronts: Callable[[Sequence[str]], list[list[int]]] | None = None
    last_write_roll: int = ANY_ROLL
    first_write_roll: int = 1
    zeroes_maximal: bool = False
    derived: bool = False
    requires: Callable[[Sequence[str], Sequence[str]], str | None] | None = None


COLUMN_KINDS: dict[str, ColumnKind] = {
    k.name: k
    for k in (
        ColumnKind("down", OPEN_FRONT, "top to bottom", _fronts_down, zeroes_maximal=True),
        ColumnKind("up", OPEN_FRONT, "bottom to top", _fronts_up, zeroes_maximal=True),
        ColumnKind("free", OPEN_ANY, "any empty cell", zeroes_maximal=True),
        ColumnKind("announce", OPEN_ANNOUNCED, "only the cell announced after roll 1", zeroes_maximal=True),
        ColumnKind("hand", OPEN_ANY, "any empty cell, right after roll 1 only", last_write_roll=1),
        ColumnKind(
            "middle",
            OPEN_FRONT,
            "from max upward and from min downward",
            _fronts_middle,
            zeroes_maximal=True,
            requires=_needs_max_min,
        ),
        ColumnKind(
            "updown",
            OPEN_FRONT,
            "from the top and from the bottom (the fronts may pass)",
            _fronts_updown,
            zeroes_maximal=True,
        ),
        ColumnKind("free2", OPEN_ANY, "any empty cell, after roll 1 or 2 only", last_write_roll=2),
        ColumnKind(
            "second",
            OPEN_ANY,
            "any empty cell, right after roll 2 only (003's variation)",
            first_write_roll=2,
            last_write_roll=2,
            zeroes_maximal=True,
        ),
        ColumnKind(
            "oddeven",
            OPEN_FRONT,
            "odd rows (1st, 3rd, ...) in order from the top, even rows "
            "(2nd, 4th, ...) in order from the bottom (003's variation)",
            _fronts_oddeven,
            zeroes_maximal=True,
        ),
        ColumnKind(
            "answer",
            OPEN_ANSWER,
            "the row of the previous turn's announcement (forced by "
            "answer_forced); any cell once the announce columns are full",
            requires=_needs_announce,
        ),
        ColumnKind("mandatory", OPEN_LAST, "any empty cell once every other column but after_row is full"),
        ColumnKind("after_row", OPEN_AFTER_ROW, "a row once it is written in every other column but mandatory"),
        ColumnKind(
            "copy",
            OPEN_COPY,
            "the row the previous player has just written (in solitaire: "
            "the row of the previous turn's write); any empty cell once every other column but "
            "mandatory and after_row is full",
            zeroes_maximal=True,
        ),
        ColumnKind(
            "maximal",
            OPEN_NONE,
            "derived: per row the best value of the played columns (min: the lowest), 0 if a zeroing column holds 0",
            derived=True,
            requires=_needs_played,
        ),
    )
}


def column_fronts(kind: str, rows: Sequence[str]) -> list[list[int]]:
    """The row sequences whose first empty cell is open, for a front-filled column kind."""
    fronts = COLUMN_KINDS[kind].fronts if kind in COLUMN_KINDS else None
    if fronts is None:
        raise ValueError(f"{kind!r} is not a front-filled column kind")
    return fronts(list(rows))


def front_masks(kind: str, rows: Sequence[str]) -> tuple[int, int]:
    """(rows of the downward front, rows of the upward front) of a front-filled kind:
    each front of :attr:`ColumnKind.fronts` must run strictly down or up the sheet (it may
    skip rows), at most one each way (then its first empty cell is the topmost /
    bottommost empty row of its rows)."""
    down = up = 0
    for front in column_fronts(kind, rows):
        mask = sum(1 << r for r in front)
        steps = [b - a for a, b in zip(front, front[1:])]
        if all(s > 0 for s in steps) and not down:
            down = mask
        elif all(s < 0 for s in steps) and not up:
            up = mask
        else:
            raise ValueError(
                f"column kind {kind!r}: a front must run down or up the sheet, one each way at most: {front}"
            )
    return down, up


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
    free = (jokers >> JOKER_FREE_SHIFT) & 3
    for v in range(1, 7):
        fixed = (jokers >> (v - 1)) & 1
        for i in range(n):
            if ra.die_canonical[dice_index, i] and ra.sorted_dice[dice_index, i] != v:
                if fixed:
                    mask[off + joker_index(JOKER_FIXED, v, i, n)] = True
                if free > 0:
                    mask[off + joker_index(JOKER_FREE, v, i, n)] = True
    if (jokers >> JOKER_BASKET_SHIFT) & 3 > 0:
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
        p = 1
        for _ in range(faces[a] - 1):
            p *= n + 1
        key += p
    return key_to_index[key]


# ---------------------------------------------------------------------------- scoring
@kernel(inline=True)
def bonus(upper, P):
    """The upper bonus (points) of a column whose upper rows sum to ``upper`` (RULES.md §2)."""
    over = upper - P[P_BONUS_THR]
    if over > 0 or (over == 0 and P[P_BONUS_STRICT] == 0):
        return P[P_BONUS_PTS] + P[P_BONUS_PER] * over
    return 0


@kernel(inline=True)
def bonus_floor(P):
    """The smallest upper sum that earns the bonus."""
    return P[P_BONUS_THR] + (1 if P[P_BONUS_STRICT] else 0)


@kernel(inline=True, nrt=True)
def difference(ones, high, low):
    """The difference of a column: ones x (max - min) (RULES.md §2); numbers or arrays."""
    return ones * (high - low)


@kernel(inline=True)
def credited_difference(ones, high, low, P):
    """The difference a column credits (points): :func:`difference`, or with
    ``difference_clamp`` ones x max(max - min, 0) (RULES.md §2)."""
    d = difference(ones, high, low)
    return max(d, 0) if P[P_DIFF_CLAMP] else d


@kernel(inline=True)
def column_parts(values_c, f, ra, out):
    """(upper, bonus, difference, lower) credited so far in one column into ``out``:
    every written cell; the bonus once every upper cell is written; the difference
    once ones, max and min are written (RULES.md §2)."""
    P = ra.P
    upper = 0
    lower = 0
    for r in range(P[P_R]):
        if ra.is_upper[r]:
            upper += values_c[r]
        elif r != P[P_MAX] and r != P[P_MIN]:
            lower += values_c[r]
    b = 0
    ub = P[P_UPPER_BITS]
    if ub != 0 and (f & ub) == ub:
        b = bonus(upper, P)
    d = 0
    if P[P_ONES] >= 0:
        db = (1 << P[P_ONES]) | (1 << P[P_MAX]) | (1 << P[P_MIN])
        if (f & db) == db:
            d = credited_difference(values_c[P[P_ONES]], values_c[P[P_MAX]], values_c[P[P_MIN]], P)
    out[0] = upper
    out[1] = b
    out[2] = d
    out[3] = lower


@kernel
def column_gains(values_c, f, r, candidates, ra, out, parts, vals):
    """For each candidate value of row ``r`` (empty) of a column, the points writing it
    adds to the column's score (the value, and the bonus or difference it completes),
    into ``out``. ``parts`` int64 (4,), ``vals`` int64 (R,): scratch."""
    for q in range(len(values_c)):
        vals[q] = values_c[q]
    column_parts(vals, f, ra, parts)
    before = parts[0] + parts[1] + parts[2] + parts[3]
    for k in range(len(candidates)):
        vals[r] = candidates[k]
        column_parts(vals, f | (1 << r), ra, parts)
        out[k] = parts[0] + parts[1] + parts[2] + parts[3] - before


@kernel(inline=True)
def maximal(values, filled, ra, vals_out):
    """The derived ``maximal`` column (RULES.md §5): its values into ``vals_out`` (R,),
    its filled-row bitmask returned. A row counts once written in every played column:
    the best value (for ``min`` the lowest), or 0 if a zeroing column holds 0 there."""
    P = ra.P
    C = P[P_C]
    f = 0
    for r in range(P[P_R]):
        vals_out[r] = 0
        everywhere = True
        for c in range(C):
            if not (filled[c] >> r) & 1:
                everywhere = False
        if not everywhere:
            continue
        f |= 1 << r
        zero = False
        for c in range(C):
            if ra.zeroing[c] and values[c, r] == 0:
                zero = True
        if zero:
            continue
        best = values[0, r]
        for c in range(1, C):
            v = values[c, r]
            if (v < best) if r == P[P_MIN_ROW] else (v > best):
                best = v
        vals_out[r] = best
    return f


@kernel(inline=True)
def column_and_maximal_points(values, filled, col, ra, parts, tmp):
    """Points of column ``col`` plus the maximal column (what a write in ``col`` can change)."""
    column_parts(values[col], filled[col], ra, parts)
    total = parts[0] + parts[1] + parts[2] + parts[3]
    if ra.P[P_HAS_MAXIMAL]:
        f = maximal(values, filled, ra, tmp)
        column_parts(tmp, f, ra, parts)
        total += parts[0] + parts[1] + parts[2] + parts[3]
    return total


@kernel(inline=True)
def column_award(values_c, filled_c, owner_c, num_players, counts):
    """003's shared sheet (RULES.md §6): the player a column's total goes to, or -1.
    ``values_c``/``filled_c``/``owner_c``: the column's values (R,), written-rows bitmask
    and writers (R,) int8; ``counts``: int64 scratch of at least ``num_players``. The
    player with the most non-zero entries wins; on a tie, the tied player owning the
    lowest non-zero entry (counting up from the bottom); no non-zero entry: nobody."""
    R = values_c.shape[0]
    for q in range(num_players):
        counts[q] = 0
    best = 0
    for r in range(R):
        if (filled_c >> r) & 1 and values_c[r] != 0:
            q = owner_c[r]
            counts[q] += 1
            if counts[q] > best:
                best = counts[q]
    if best == 0:
        return -1
    for r in range(R - 1, -1, -1):
        if (filled_c >> r) & 1 and values_c[r] != 0 and counts[owner_c[r]] == best:
            return owner_c[r]
    return -1


@kernel
def sheet_parts(values, filled, ra, parts_out, cols_out, parts, tmp):
    """The sheet's score parts into ``parts_out`` (upper, bonus, difference, lower,
    columns with their bonus) and each column's points into ``cols_out`` ``(C + 1,)``
    (last: maximal, 0 if none); returns the total (points)."""
    C = ra.P[P_C]
    for k in range(5):
        parts_out[k] = 0
    total = 0
    for c in range(C + 1):
        cols_out[c] = 0
        if c == C:
            if not ra.P[P_HAS_MAXIMAL]:
                break
            f = maximal(values, filled, ra, tmp)
            column_parts(tmp, f, ra, parts)
        else:
            column_parts(values[c], filled[c], ra, parts)
        for k in range(4):
            parts_out[k] += parts[k]
        if parts[1] > 0:
            parts_out[4] += 1
        cols_out[c] = parts[0] + parts[1] + parts[2] + parts[3]
        total += cols_out[c]
    return total


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
