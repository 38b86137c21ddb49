"""Greedy and expectimax baselines, built on the engine's tables.

Both value a write of value ``v`` in a cell with a vectorised function of ``v`` (over all
dice multisets at once), so a decision costs a few array operations.

``greedy`` (documented rule): write the legal cell with the highest *immediate points*
(the change of its column's score: the value, plus the bonus or the difference when this
write completes them; the derived ``maximal`` column is ignored). While a re-roll is
legal it looks one roll ahead: it keeps the canonical hold with the highest expected
best immediate points after one more roll, and re-rolls only if that beats writing now.
It announces only when it must (only announce cells left), choosing the announce cell
with the highest immediate points for the current dice.

``expectimax``: per turn, the exact expectation over all remaining rolls, holds and
outcomes (:func:`jamb_env.rules.turn.plan_turn`) of a per-cell value function ``h``:

* ``par(row)``: the expected value of the row when a whole fresh turn targets it alone
  (exact, from the same tables); every write is valued relative to it, so writing a 0
  in ``jamb`` costs about 3 points and a 0 in ``full`` about 20;
* lower rows: ``v - par``;
* upper rows: ``v - par`` plus ``bonus x`` the change of a normal-approximation
  probability of reaching the bonus (remaining upper rows expected at 2.5 dice each,
  standard deviation 1.2 dice each);
* ones, max, min: the change of the column's expected difference ``ones x (max - min)``,
  with unwritten parts at their ``par``;

and at roll 1 it compares not announcing with announcing each open announce cell (the
turn then planned for that cell alone), taking the best expectation.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from jamb_env import JambEnv, Ruleset
from jamb_env.rules import GameState, layout, max_rolls, writable_bits
from jamb_env.rules import kernels as rk
from jamb_env.rules.tables import UPPER_ROWS

from jamb_env.rules.turn import NEG, best_hold, first_roll_distribution, hold_value, plan_turn, ranked


class _ColumnModel:
    """Per-ruleset constants for valuing writes (row groups, pars)."""

    def __init__(self, rules: Ruleset):
        self.rules = rules
        rows = rules.rows
        self.upper = np.flatnonzero(rules.arrays.is_upper).tolist()
        self.face = {r: UPPER_ROWS.index(rows[r]) + 1 for r in self.upper}
        self.upper_bits = sum(1 << r for r in self.upper)
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
        column = next((c for c, k in enumerate(rules.columns) if k != "hand"), 0)
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
        rk.column_gains(st.values[c], int(st.filled[c]), r, np.asarray(v, dtype=np.int64), self.rules.arrays, out,
                        np.zeros(4, dtype=np.int64), np.zeros(self.rules.num_rows, dtype=np.int64))
        return out.astype(np.float64)

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
        if r in self.face and filled & self.upper_bits != self.upper_bits:
            upper = sum(values[q] for q in self.upper if filled >> q & 1)
            remaining = [q for q in self.upper if not filled >> q & 1 and q != r]
            before = self._p_bonus(np.asarray(float(upper)), remaining + [r])
            after = self._p_bonus(upper + v, remaining)
            h = h + rk.bonus(rk.bonus_floor(rules.arrays.P) + 3, rules.arrays.P) * (after - before)
        if r in self.diff_rows:
            bits = (1 << self.ones) | (1 << self.max) | (1 << self.min)
            if filled & bits != bits:
                h = h + self._expected_difference(values, filled, r, v) - self._expected_difference(values, filled)
        return h


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if np.ndim(x) else math.erf(float(x))


@lru_cache(maxsize=None)
def column_model(rules: Ruleset) -> _ColumnModel:
    return _ColumnModel(rules)


def _cells(rules: Ruleset, bits: list[int]) -> list[tuple[int, int]]:
    R = rules.num_rows
    return [(c, r) for c, b in enumerate(bits) for r in range(R) if b >> r & 1]


class _TurnAgent:
    """Shared plumbing: per-turn caches keyed by (turn, announcement)."""

    name = "base"

    def __init__(self):
        self._key = None
        self._cache: dict = {}

    def _turn_cache(self, st: GameState) -> dict:
        key = (st.turn, st.announced, st.answer_due, st.values.tobytes(), st.filled.tobytes())
        if key != self._key:
            self._key, self._cache = key, {}
        return self._cache


class GreedyAgent(_TurnAgent):
    """Immediate points, with a one-roll look-ahead for holds (module docstring)."""

    name = "greedy"

    def act(self, env: JambEnv, observation, mask) -> int:
        rules, st = env.ruleset, env.game
        model = column_model(rules)
        lay = layout(rules)
        r, m = st.roll, st.dice_index
        write_now = _cells(rules, writable_bits(rules, st, r))
        if not write_now:  # only announce cells are open: the announcement is forced
            best, best_pts = None, -np.inf
            for j in np.flatnonzero(mask[lay.announce_offset : lay.write_offset]):
                c, row = divmod(int(lay.announce_cells[j]), rules.num_rows)
                pts = model.immediate_points(st, c, row, model.cell_values[r - 1, m : m + 1, c * rules.num_rows + row])[0]
                if pts > best_pts:
                    best, best_pts = lay.announce_offset + int(j), pts
            return int(best)
        gains = [model.immediate_points(st, c, row, model.cell_values[r - 1, m : m + 1, c * rules.num_rows + row])[0] for c, row in write_now]
        i = int(np.argmax(gains))
        if mask[: lay.num_holds].any():
            nxt = _cells(rules, writable_bits(rules, st, r + 1))
            best_next = np.full(rules.tables.num_multisets, NEG)
            for c, row in nxt:
                best_next = np.maximum(best_next, model.immediate_points(st, c, row, model.cell_values[r, :, c * rules.num_rows + row]))
            hold, value = best_hold(rules.tables, m, best_next)
            if value > gains[i] + 1e-9:
                return hold
        c, row = write_now[i]
        return lay.write_offset + c * rules.num_rows + row


class ExpectimaxAgent(_TurnAgent):
    """Exact turn expectation of the heuristic cell values, with announcements."""

    name = "expectimax"
    explain_unit = "expected value of the rest of the turn, in points relative to each row's par"

    def explain(self, env: JambEnv) -> list[tuple[int, float]]:
        """Every legal action now with its expected heuristic value, best first."""
        rules, st = env.ruleset, env.game
        lay = layout(rules)
        mask = env.action_masks()
        self.act(env, env.observe(), mask)  # fills the turn cache
        cache = self._turn_cache(st)
        key = ("cell", st.announced) if st.announced >= 0 else ("free",)
        W, T, arg = cache[key]
        r, m = st.roll, st.dice_index
        out = []
        for a in np.flatnonzero(mask):
            a = int(a)
            if a < lay.num_holds:
                out.append((a, hold_value(rules.tables, m, a, W[r])))
            elif a < lay.write_offset:
                cell = int(lay.announce_cells[a - lay.announce_offset])
                if ("cell", cell) not in cache:
                    cache[("cell", cell)] = self._plan(env, st, only_cell=cell)
                out.append((a, float(cache[("cell", cell)][0][r - 1, m])))
            else:
                cell = a - lay.write_offset
                c, row = divmod(cell, rules.num_rows)
                model = column_model(rules)
                h = model.heuristic(st, c, row, model.cell_values[r - 1, m : m + 1, cell])[0]
                out.append((a, float(h)))
        return ranked(out)

    def _plan(self, env: JambEnv, st: GameState, only_cell: int | None = None):
        """(W, T, argmax cell per roll and multiset) for the rest of the turn."""
        rules = env.ruleset
        model = column_model(rules)
        R = max_rolls(rules, st)
        M = rules.tables.num_multisets
        T = np.full((R, M), NEG)
        arg = np.full((R, M), -1, dtype=np.int64)
        h_cache: dict[int, np.ndarray] = {}
        for k in range(R):
            if only_cell is not None:
                cells = [divmod(only_cell, rules.num_rows)]
            else:
                cells = _cells(rules, writable_bits(rules, st, k + 1))
            for c, row in cells:
                cell = c * rules.num_rows + row
                if cell not in h_cache:
                    h_cache[cell] = model.heuristic(st, c, row, model.cell_values[:R, :, cell])
                h = h_cache[cell][k]
                better = h > T[k]
                T[k] = np.where(better, h, T[k])
                arg[k] = np.where(better, cell, arg[k])
        return plan_turn(rules.tables, T), T, arg

    def act(self, env: JambEnv, observation, mask) -> int:
        rules, st = env.ruleset, env.game
        lay = layout(rules)
        cache = self._turn_cache(st)
        r, m = st.roll, st.dice_index
        if st.announced >= 0:
            key = ("cell", st.announced)
            if key not in cache:
                cache[key] = self._plan(env, st, only_cell=st.announced)
        else:
            key = ("free",)
            if key not in cache:
                cache[key] = self._plan(env, st)
            announce = np.flatnonzero(mask[lay.announce_offset : lay.write_offset])
            if len(announce):
                best_value, best_action = cache[key][0][r - 1, m], None
                for j in announce:
                    cell = int(lay.announce_cells[j])
                    if ("cell", cell) not in cache:
                        cache[("cell", cell)] = self._plan(env, st, only_cell=cell)
                    value = cache[("cell", cell)][0][r - 1, m]
                    if value > best_value + 1e-9:
                        best_value, best_action = value, lay.announce_offset + int(j)
                if best_action is not None:
                    return best_action
        W, T, arg = cache[key]
        if mask[: lay.num_holds].any() and r < len(W):
            hold, value = best_hold(rules.tables, m, W[r])
            if value > T[r - 1, m] + 1e-9 or arg[r - 1, m] < 0:
                return hold
        return lay.write_offset + int(arg[r - 1, m])
