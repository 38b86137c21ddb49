"""The exact turn planner: backward induction over the rules engine's hold-transition tables.

A turn's decisions after roll ``r`` with dice multiset ``m``: write now (a terminal value
that the caller gives per roll and multiset) or re-roll with one of the canonical holds,
whose outcome distribution is ``DiceTables.transition``. :func:`plan_turn` computes the
value of every (roll, multiset) by backward induction; :func:`best_hold` reads the
maximising hold. Everything is vectorised over a leading batch axis (states or targets).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from jamb_env.rules import kernels as rk
from jamb_env.rules.ruleset import Ruleset
from jamb_env.rules.tables import DiceTables

NEG = -1e18  # "not writable": never chosen while anything else is possible


@cache
def hold_index(tables: DiceTables) -> tuple[np.ndarray, np.ndarray]:
    """Canonical holds per multiset, padded: (masks (M, H) int, subs (M, H) int).

    Padding entries have mask -1 and point at sub-multiset column ``S`` (an extra column
    the planner fills with ``NEG``).
    """
    M = tables.num_multisets
    S = len(tables.sub_counts)
    counts = tables.hold_canonical.sum(axis=1)
    H = int(counts.max())
    masks = np.full((M, H), -1, dtype=np.int64)
    subs = np.full((M, H), S, dtype=np.int64)
    for m in range(M):
        ks = np.flatnonzero(tables.hold_canonical[m])
        masks[m, : len(ks)] = ks
        subs[m, : len(ks)] = tables.hold_sub[m, ks]
    return masks, subs


def first_roll_distribution(tables: DiceTables) -> np.ndarray:
    """float64 (M,): probability of each multiset on a turn's first roll."""
    return tables.transition[int(np.flatnonzero(tables.sub_size == 0)[0])]


def continuation(tables: DiceTables, values: np.ndarray) -> np.ndarray:
    """Value of the best re-roll from each multiset, given next-roll values.

    Args:
        values: float64 ``(..., M)``: the value of each multiset after the re-roll.

    Returns:
        float64 ``(..., M)``: max over canonical holds of the expected next value.
    """
    _, subs = hold_index(tables)
    expected = values @ tables.transition.T  # (..., S)
    pad = np.full(expected.shape[:-1] + (1,), NEG)
    expected = np.concatenate([expected, pad], axis=-1)
    return expected[..., subs].max(axis=-1)


def plan_turn(tables: DiceTables, terminal: np.ndarray) -> np.ndarray:
    """Backward induction over a turn.

    Args:
        terminal: float64 ``(R, ..., M)``: the value of writing after roll ``r + 1``
            with multiset ``m`` (``NEG`` where nothing may be written); ``R`` is the
            number of rolls this turn allows.

    Returns:
        float64 ``(R, ..., M)``: ``W[r]`` = value of being after roll ``r + 1`` with
        ``m`` and playing on optimally (write, or re-roll while rolls remain).
    """
    W = np.empty_like(terminal)
    W[-1] = terminal[-1]
    for r in range(len(terminal) - 2, -1, -1):
        W[r] = np.maximum(terminal[r], continuation(tables, W[r + 1]))
    return W


def best_hold(tables: DiceTables, m: int, next_values: np.ndarray) -> tuple[int, float]:
    """The canonical hold of multiset ``m`` with the best expected ``next_values`` (M,).

    Returns (keep-mask action index, expected value).
    """
    masks, subs = hold_index(tables)
    valid = masks[m] >= 0
    expected = tables.transition[subs[m, valid]] @ next_values
    j = int(np.argmax(expected))
    return int(masks[m, valid][j]), float(expected[j])


def hold_value(tables: DiceTables, m: int, hold: int, next_values: np.ndarray) -> float:
    """Expected ``next_values`` (M,) after re-rolling multiset ``m`` with keep-mask ``hold``."""
    return float(tables.transition[tables.hold_sub[m, hold]] @ next_values)


def ranked(pairs: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """(action, value) pairs best first (ties: the lower action first)."""
    return sorted(pairs, key=lambda x: -x[1])


def row_targets(tables: DiceTables, values: np.ndarray, rolls) -> tuple[np.ndarray, np.ndarray]:
    """What each target (row or cell) is worth this turn if the rest of the turn aims at
    it alone.

    Args:
        values: ``(K, M, T)``: the value of writing target ``t`` after roll ``k + 1`` with
            multiset ``m`` (points).
        rolls: the last roll after which each target may be written: an int for all, or
            int ``(T,)`` (a column written only after roll 1, say); no re-roll is planned
            past it, so from that roll on a target's reach is its value now.

    Returns:
        ``reach`` float64 ``(K, M, T)``: expected points of target ``t`` from roll ``k + 1``
        with ``m`` under the hold policy that maximises that target alone (the better of
        writing now and re-rolling); ``hold`` int64 ``(K, M, T)``: that policy's
        canonical keep-mask when a re-roll is still planned (the best re-roll, even where
        writing now is as good), -1 where none is. Source: RULES.md §3 (holds).
    """
    values = np.asarray(values, dtype=np.float64)
    K, M, T = values.shape
    last = np.broadcast_to(np.minimum(np.asarray(rolls, dtype=np.int64), K), (T,))
    masks, subs = hold_index(tables)
    reach = values.copy()
    hold = np.full((K, M, T), -1, dtype=np.int64)
    for k in range(K - 2, -1, -1):
        can = k + 2 <= last  # (T,): a re-roll after roll k + 1 still leaves a roll to write on
        if not can.any():
            continue
        expected = reach[k + 1].T @ tables.transition.T  # (T, S)
        expected = np.concatenate([expected, np.full((T, 1), NEG)], axis=1)
        per_hold = expected[:, subs]  # (T, M, H)
        j = per_hold.argmax(axis=2)  # (T, M): first best among canonical holds
        best = np.take_along_axis(per_hold, j[..., None], axis=2)[..., 0]
        reach[k] = np.where(can, np.maximum(values[k], best.T), values[k])
        hold[k] = np.where(can, np.take_along_axis(masks, j.T, axis=1), -1)
    return reach, hold


@cache
def cell_plans(rules: Ruleset) -> tuple[np.ndarray, np.ndarray]:
    """:func:`row_targets` for every cell of ``rules``, on a normal turn and on the last turn.

    A cell's plan ends at the last roll its column may be written on (``hand``: roll 1,
    ``free2``, ``second``: roll 2; RULES.md §1), re-rolls before the first (``second``:
    roll 1), and ends at ``last_turn_rolls`` on the last turn; ``min``
    rows are planned to keep their sum low.

    Returns:
        ``reach`` float64 ``(2, K, M, C*R)``: the cell's expected row value (points; the dice
        sum for ``min``) from roll ``k + 1`` with multiset ``m``, for a normal turn ([0]) and
        the last turn ([1]); ``hold`` int64, same shape: the plan's canonical keep-mask
        (hold action id), -1 where no re-roll is planned.
    """
    K, R = rules.max_rolls, rules.num_rows
    sign = np.tile(np.where(np.array(rules.rows) == "min", -1.0, 1.0), len(rules.columns))
    limit = np.repeat(np.minimum(rules.arrays.last_roll, K), R)
    values = rules.cell_values.astype(np.float64) * sign
    first = np.repeat(rules.arrays.first_roll, R)  # a cell not writable yet (``second``: before roll 2) must re-roll
    for k in range(K):
        values[k][:, first > k + 1] = NEG
    turns = (0, rules.num_cells - 1)  # a normal turn, the last turn: their rolls are the rules' (max_rolls)
    reach, hold = zip(
        *(row_targets(rules.tables, values, np.minimum(limit, int(rk.max_rolls(t, rules.arrays.P)))) for t in turns)
    )
    return np.stack(reach) * sign, np.stack(hold)
