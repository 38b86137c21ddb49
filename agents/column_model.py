"""The baselines' model of one column (:mod:`agents.heuristic`'s module docstring): per
ruleset the row groups and each row's *par*, a write's immediate points (greedy), the
expectimax value ``h`` of a write and a column's expected points still to come (the prior
of the ``search`` agent); and small helpers on hypothetical states.

Every rule it needs is read from the kernels (:mod:`jamb_env.rules.kernels`: the bonus,
when the bonus and the difference are credited, a write's credited points); the normal
approximation of the upper sum and the pars are the model's own.
"""

from __future__ import annotations

import dataclasses
import math
from functools import cache

import numpy as np

from jamb_env import Ruleset
from jamb_env.rules import GameState
from jamb_env.rules import kernels as rk
from jamb_env.rules.planner import first_roll_distribution, plan_turn
from jamb_env.rules.tables import UPPER_ROWS


class _ColumnModel:
    """Per-ruleset constants for valuing writes (row groups, pars)."""

    def __init__(self, rules: Ruleset):
        self.rules = rules
        rows = rules.rows
        self.upper = np.flatnonzero(rules.arrays.is_upper).tolist()
        self.face = {r: UPPER_ROWS.index(rows[r]) + 1 for r in self.upper}
        diff = rk.difference_rows(rules)
        self.ones, self.max, self.min = diff if diff else (-1, -1, -1)
        self.diff_rows = set(diff) if diff else set()
        # values of every cell for each roll and multiset: (K, M, C*R)
        self.cell_values = rules.cell_values.astype(np.float64)
        self.par = self._pars()

    def _pars(self) -> np.ndarray:
        """Expected value of each row when one fresh turn (``rules.rolls`` rolls) targets it."""
        rules = self.rules
        tables = rules.tables
        p1 = first_roll_distribution(tables)
        column = par_column(rules)
        out = np.zeros(rules.num_rows)
        for r in range(rules.num_rows):
            v = self.cell_values[: rules.rolls, :, column * rules.num_rows + r]
            sign = -1.0 if r == self.min else 1.0
            W = plan_turn(tables, sign * v)
            out[r] = sign * float(W[0] @ p1)
        return out

    # ------------------------------------------------------------------ greedy
    def immediate_points(self, st: GameState, c: int, r: int, v: np.ndarray) -> np.ndarray:
        """Points credited in column ``c`` by writing values ``v`` (array) in row ``r``
        (:func:`jamb_env.rules.kernels.column_gains`)."""
        out = np.zeros(len(v), dtype=np.int64)
        rk.column_gains(
            st.values[c],
            int(st.filled[c]),
            r,
            np.asarray(v, dtype=np.int64),
            self.rules.arrays,
            out,
            np.zeros(4, dtype=np.int64),
            np.zeros(self.rules.num_rows, dtype=np.int64),
        )
        return out.astype(np.float64)

    def upper_sum(self, values: np.ndarray, filled: int, skip: int | None = None) -> int:
        """The upper sum of a column (:func:`jamb_env.rules.kernels.column_parts`), without
        row ``skip``."""
        if skip is not None:
            values, filled = np.where(np.arange(len(values)) == skip, 0, values), filled & ~(1 << skip)
        return self.rules.column_parts(values, filled)[0]

    # ------------------------------------------------------------------ expectimax
    def _p_bonus(self, upper: np.ndarray, remaining: list[int]) -> np.ndarray:
        rules = self.rules
        need = rk.bonus_floor(rules.arrays.P) - upper
        if not remaining:
            return (need <= 0).astype(np.float64)
        mu = sum(2.5 * self.face[q] for q in remaining)
        sd = math.sqrt(sum((1.2 * self.face[q]) ** 2 for q in remaining))
        z = (mu - need + 0.5) / sd
        return 0.5 * (1.0 + _erf(z / math.sqrt(2.0)))

    def _expected_difference(self, values, filled: int, r: int | None = None, v=None):
        def part(row):
            if row == r:
                return v
            return values[row] if filled >> row & 1 else self.par[row]

        return rk.difference(part(self.ones), part(self.max), part(self.min))

    def heuristic(self, st: GameState, c: int, r: int, v: np.ndarray) -> np.ndarray:
        """Expectimax value ``h`` of writing values ``v`` in cell (c, r) (module docstring)."""
        rules = self.rules
        values = st.values[c].astype(np.float64)
        filled = int(st.filled[c])
        if r in (self.max, self.min):
            h = np.zeros_like(v)
        else:
            h = v - self.par[r]
        if r in self.face and not rk.bonus_credited(filled, rules.arrays.P):
            upper = self.upper_sum(st.values[c], filled)
            remaining = [q for q in self.upper if not filled >> q & 1 and q != r]
            before = self._p_bonus(np.asarray(float(upper)), remaining + [r])
            after = self._p_bonus(upper + v, remaining)
            h = h + rk.bonus(rk.bonus_floor(rules.arrays.P) + 3, rules.arrays.P) * (after - before)
        if r in self.diff_rows and not rk.difference_credited(filled, rules.arrays.P):
            h = h + self._expected_difference(values, filled, r, v) - self._expected_difference(values, filled)
        return h

    def column_prior(self, values: np.ndarray, filled: int, r: int | None = None, v=None) -> np.ndarray:
        """The model's expected points still to come in one column (the prior of the
        ``search`` agent's value): each empty row at its ``par`` (max and min: through
        the difference only), ``bonus x`` the normal-approximation chance of the bonus
        while the upper rows are not all written, and the expected difference
        (unwritten parts at ``par``) while it is not credited. With ``r`` and ``v``
        (array): the column after writing each ``v`` in row ``r``; float64 like ``v``."""
        rules = self.rules
        v = np.zeros(1) if v is None else np.asarray(v, dtype=np.float64)
        values = values.astype(np.float64)
        if r is not None:
            filled |= 1 << r
        out = np.zeros_like(v)
        for q in range(rules.num_rows):
            if not filled >> q & 1 and q not in (self.max, self.min):
                out = out + self.par[q]
        if self.upper and not rk.bonus_credited(filled, rules.arrays.P):
            upper = self.upper_sum(values, filled, r) + (v if r in self.face else 0.0)
            remaining = [q for q in self.upper if not filled >> q & 1]
            out = out + rk.bonus(rk.bonus_floor(rules.arrays.P) + 3, rules.arrays.P) * self._p_bonus(
                np.asarray(upper, dtype=np.float64), remaining
            )
        if self.diff_rows and not rk.difference_credited(filled, rules.arrays.P):
            if r is None:
                out = out + self._expected_difference(values, filled)
            else:
                out = out + self._expected_difference(values, filled, r, v)
        return out


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if np.ndim(x) else math.erf(float(x))


@cache
def column_model(rules: Ruleset) -> _ColumnModel:
    return _ColumnModel(rules)


def replace_state(st: GameState, values: np.ndarray, filled: np.ndarray) -> GameState:
    """``st`` with other written values and filled masks (a hypothetical sheet)."""
    return dataclasses.replace(
        st, values=values.astype(st.values.dtype), filled=filled.astype(st.filled.dtype), dice=st.dice.copy()
    )


def impure(st: GameState) -> GameState:
    """``st`` as after a roll that is not pure: what a later roll of the turn may write
    for sure (a pure roll opens announce cells, ``announce_pure``, RULES.md §5; the plans
    count on it only at the roll where it happened)."""
    return dataclasses.replace(st, pure=0) if st.pure else st


def replace_roll(st: GameState, roll: int) -> GameState:
    """``st`` at another roll of the same turn (the dice unchanged)."""
    return dataclasses.replace(st, roll=int(roll))


def par_column(rules: Ruleset) -> int:
    """The column whose cell values the pars are computed on: the first one written at
    every roll of a turn (not ``hand`` or ``second``), else 0."""
    ra = rules.arrays
    return next((c for c in range(len(rules.columns)) if ra.first_roll[c] == 1 and ra.last_roll[c] >= rules.rolls), 0)
