"""Scoring kernels (RULES.md §2, §5, §6): the upper bonus, the difference, a column's
parts, the derived ``maximal`` column, the sheet's parts and the shared sheet's award.

Every rule that decides what a sheet credits is here and only here;
:func:`jamb_env.rules.kernels.write` credits a write through
:func:`column_and_maximal_points`. :mod:`jamb_env.rules.kernels` re-exports every name.
"""

from __future__ import annotations

from jamb_env.rules._jit import kernel
from jamb_env.rules.params import (
    P_BONUS_PER,
    P_BONUS_PTS,
    P_BONUS_STRICT,
    P_BONUS_THR,
    P_C,
    P_DIFF_CLAMP,
    P_HAS_MAXIMAL,
    P_MAX,
    P_MIN,
    P_MIN_ROW,
    P_ONES,
    P_R,
    P_UPPER_BITS,
)

__all__ = [
    "bonus",
    "bonus_credited",
    "bonus_floor",
    "column_and_maximal_points",
    "column_award",
    "column_gains",
    "column_parts",
    "credited_difference",
    "difference",
    "difference_credited",
    "maximal",
    "sheet_parts",
    "write_gains",
]


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


@kernel(inline=True)
def bonus_credited(f, P):
    """A column with filled-row bitmask ``f`` has its bonus settled and credited (by
    :func:`bonus`, 0 below the threshold): the ruleset has upper rows and every one of
    them is written (RULES.md §2)."""
    ub = P[P_UPPER_BITS]
    return ub != 0 and (f & ub) == ub


@kernel(inline=True)
def difference_credited(f, P):
    """A column with filled-row bitmask ``f`` has its difference credited: the ruleset
    scores one (ones, max and min are all rows) and the three are written (RULES.md §2)."""
    if P[P_ONES] < 0:
        return False
    db = (1 << P[P_ONES]) | (1 << P[P_MAX]) | (1 << P[P_MIN])
    return (f & db) == db


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
    b = bonus(upper, P) if bonus_credited(f, P) else 0
    d = 0
    if difference_credited(f, P):
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


@kernel
def write_gains(values, filled, cell, candidates, ra, out, parts, tmp):
    """For each candidate value of the empty cell ``cell``, the points writing it credits
    (what :func:`jamb_env.rules.kernels.write` returns: the change of its column's and the
    maximal column's points) into ``out``. ``values``/``filled``: a scratch copy of the
    sheet (restored on return); ``parts`` int64 (4,), ``tmp`` int64 (R,): scratch."""
    R = ra.P[P_R]
    c = cell // R
    r = cell % R
    before = column_and_maximal_points(values, filled, c, ra, parts, tmp)
    old_v, old_f = values[c, r], filled[c]
    filled[c] = old_f | (1 << r)
    for k in range(len(candidates)):
        values[c, r] = candidates[k]
        out[k] = column_and_maximal_points(values, filled, c, ra, parts, tmp) - before
    values[c, r], filled[c] = old_v, old_f


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
