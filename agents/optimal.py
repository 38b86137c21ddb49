"""Exact optimal play of one column filled in a fixed order (dynamic programming).

For a sheet of one ``down`` or ``up`` column (presets ``classic_down``, ``classic_up``,
``yu48_down``, ``standard_down``), the game is a finite Markov decision process whose
state between turns is small: the next cell (the order is fixed), the upper sum so far
(capped at the bonus threshold, or exact where the bonus grows per point), and the values
of ones / max / min written while the difference is not yet credited. Each turn is solved
exactly over all rolls, holds and outcomes with the engine's hold-transition tables
(:mod:`jamb_env.rules.turn`), so the value of the empty sheet is the exact expected score of
optimal play.

    python -m agents.optimal classic_down      # prints the exact expected score, 4 decimals

The same solver, given a row order, values any column played in a fixed order; the
``columnwise`` agent builds on it.
"""

from __future__ import annotations

import argparse
import sys
from functools import lru_cache

import numpy as np

from jamb_env import JambEnv, Ruleset, load_ruleset
from jamb_env.rules import kernels as rk
from jamb_env.rules import layout

from jamb_env.rules.turn import best_hold, first_roll_distribution, hold_value, plan_turn, ranked

_BLOCK = 256  # states per vectorised block (bounds memory of the hold gather)


class ColumnSolver:
    """Exact values of one column of ``rules`` filled in the row order ``order``.

    Args:
        rules: the ruleset (dice tables, cell values, bonus and difference rules).
        order: row indices in the order the column is filled (every row once).
        column: index of the column in ``rules.columns`` whose cell values apply.
        rolls_last: rolls allowed in the column's last turn (default: the ruleset's
            ``last_turn_rolls``; the columnwise agent passes ``rules.rolls``).

    Attributes:
        expected_score: exact expected points of optimal play (float).
    """

    def __init__(self, rules: Ruleset, order: list[int], column: int = 0, rolls_last: int | None = None):
        if sorted(order) != list(range(rules.num_rows)):
            raise ValueError(f"order must list every row of {rules.name} once, got {order}")
        self.rules = rules
        self.order = list(order)
        self.column = column
        self.tables = rules.tables
        n_steps = len(order)
        self.rolls = [rules.rolls] * n_steps
        self.rolls[-1] = rules.last_turn_rolls if rolls_last is None else rolls_last
        self._upper_rows = set(np.flatnonzero(rules.arrays.is_upper).tolist())
        self._last_upper_step = max((k for k, r in enumerate(order) if r in self._upper_rows), default=-1)
        self._diff = rk.difference_rows(rules)
        self._cap = None if rules.bonus_per_point else int(rk.bonus_floor(rules.arrays.P))
        # forward: the reachable states before each step
        self.states: list[dict[tuple, int]] = [{(0, None, None, None): 0}]
        self._values: list[np.ndarray] = []  # distinct writable values per step
        self._vidx: list[np.ndarray] = []  # (R, M) index of the value of each multiset
        for k in range(n_steps):
            cv = self._cell_values(k)  # (R, M)
            values, inv = np.unique(cv, return_inverse=True)
            self._values.append(values)
            self._vidx.append(inv.reshape(cv.shape))
            nxt: dict[tuple, int] = {}
            for x in self.states[k]:
                for v in values:
                    y, _ = self._step(k, x, int(v))
                    nxt.setdefault(y, len(nxt))
            self.states.append(nxt)
        # backward: value of each state before each step
        self.V: list[np.ndarray] = [np.zeros(0)] * (n_steps + 1)
        self.V[n_steps] = np.zeros(len(self.states[n_steps]))
        for k in range(n_steps - 1, -1, -1):
            self.V[k] = self._solve_step(k)
        self.expected_score = float(self.V[0][0])

    # -------------------------------------------------------------- model
    def _cell_values(self, k: int) -> np.ndarray:
        cell = self.column * self.rules.num_rows + self.order[k]
        return self.rules.cell_values[: self.rolls[k], :, cell].astype(np.int64)

    def _step(self, k: int, x: tuple, v: int) -> tuple[tuple, int]:
        """State after writing value ``v`` at step ``k`` from state ``x``, and the points."""
        rules = self.rules
        u, ones, mx, mn = x
        row = self.order[k]
        points = 0
        if row in self._upper_rows:
            points += v
            u = u + v
            if self._cap is not None:
                u = min(u, self._cap)
            if k == self._last_upper_step:
                points += int(rk.bonus(u, rules.arrays.P))
                u = 0
        elif self._diff is None or row not in self._diff:
            points += v
        if self._diff is not None and row in self._diff:
            if row == self._diff[0]:
                ones = v
            elif row == self._diff[1]:
                mx = v
            else:
                mn = v
            if ones is not None and mx is not None and mn is not None:
                points += int(rk.credited_difference(ones, mx, mn, self.rules.arrays.P))
                ones = mx = mn = None
            elif mx is not None and mn is not None:  # only max - min matters now
                mx, mn = mx - mn, 0
        return (u, ones, mx, mn), points

    def _terminal(self, k: int, idx: np.ndarray | None = None) -> np.ndarray:
        """float64 (R, N, M): value of writing now, for the states ``idx`` of step ``k``."""
        states = list(self.states[k])
        if idx is not None:
            states = [states[i] for i in idx]
        nxt, V1 = self.states[k + 1], self.V[k + 1]
        values = self._values[k]
        G = np.empty((len(states), len(values)))
        for i, x in enumerate(states):
            for j, v in enumerate(values):
                y, pts = self._step(k, x, int(v))
                G[i, j] = pts + V1[nxt[y]]
        return np.stack([G[:, self._vidx[k][r]] for r in range(self.rolls[k])])

    def _solve_step(self, k: int) -> np.ndarray:
        p1 = first_roll_distribution(self.tables)
        n = len(self.states[k])
        out = np.empty(n)
        for start in range(0, n, _BLOCK):
            idx = np.arange(start, min(n, start + _BLOCK))
            W = plan_turn(self.tables, self._terminal(k, idx))
            out[idx] = W[0] @ p1
        return out

    # -------------------------------------------------------------- play
    def state_of(self, values: np.ndarray, filled: int) -> tuple[int, tuple]:
        """(step, state) of a column with row ``values`` and ``filled`` bitmask."""
        k = 0
        x = (0, None, None, None)
        for k, row in enumerate(self.order):
            if not filled >> row & 1:
                return k, x
            x, _ = self._step(k, x, int(values[row]))
        return len(self.order), x

    def turn_tables(self, k: int, x: tuple) -> np.ndarray:
        """(R, M) values of the current turn (``plan_turn``) for state ``x`` at step ``k``."""
        i = self.states[k][x]
        return plan_turn(self.tables, self._terminal(k, np.array([i])))[:, 0, :]


def fixed_order(rules: Ruleset, kind: str) -> list[int]:
    """Row order of a fixed-order column: ``up`` bottom-up, every other kind top-down."""
    R = rules.num_rows
    return list(range(R - 1, -1, -1)) if kind == "up" else list(range(R))


@lru_cache(maxsize=None)
def solver_for(rules: Ruleset, column: int, rolls_last: int | None = None) -> ColumnSolver:
    return ColumnSolver(rules, fixed_order(rules, rules.columns[column]), column, rolls_last)


class OptimalAgent:
    """Optimal play on a one-column sheet filled in a fixed order (``down`` or ``up``)."""

    name = "optimal"

    def __init__(self, ruleset: str | Ruleset):
        rules = load_ruleset(ruleset)
        if len(rules.columns) != 1 or rules.columns[0] not in ("down", "up") or rules.derived_columns:
            raise ValueError(
                f"the exact solver needs a sheet of one down or up column; {rules.name} has "
                f"{', '.join(rules.columns)} (try classic_down, classic_up, yu48_down, standard_down)"
            )
        self.rules = rules
        self.solver = solver_for(rules, 0)
        self._cache: tuple | None = None

    @property
    def expected_score(self) -> float:
        return self.solver.expected_score

    def act(self, env: JambEnv, observation, mask) -> int:
        return play_column_turn(env, self.solver, 0, self)

    explain_unit = "expected final score (points) with optimal play after the action"

    def explain(self, env: JambEnv) -> list[tuple[int, float]]:
        """Every legal action now with the exact expected final score, best first."""
        rules, game = env.ruleset, env.game
        lay = layout(rules)
        k, x = self.solver.state_of(game.values[0], int(game.filled[0]))
        W = self.solver.turn_tables(k, x)
        T = self.solver._terminal(k, np.array([self.solver.states[k][x]]))[:, 0, :]
        r, m = game.roll, game.dice_index
        out = []
        for a in np.flatnonzero(env.action_masks()):
            a = int(a)
            if a < lay.num_holds:
                value = hold_value(rules.tables, m, a, W[r])
            else:
                value = float(T[r - 1, m])
            out.append((a, env.score + value))
        return ranked(out)


def play_column_turn(env: JambEnv, solver: ColumnSolver, column: int, owner) -> int:
    """The optimal action in ``env`` for ``solver``'s column (whose next cell is the target).

    ``owner._cache`` keeps the turn tables while a turn lasts.
    """
    rules = env.ruleset
    game = env.game
    lay = layout(rules)
    k, x = solver.state_of(game.values[column], int(game.filled[column]))
    cell = column * rules.num_rows + solver.order[k]
    key = (id(solver), game.turn, k, x)
    if owner._cache is None or owner._cache[0] != key:
        owner._cache = (key, solver.turn_tables(k, x), solver._terminal(k, np.array([solver.states[k][x]]))[:, 0, :])
    _, W, T = owner._cache
    r = game.roll - 1
    if rules.columns[column] == "announce" and game.announced < 0:
        return lay.announce_offset + int(np.flatnonzero(lay.announce_cells == cell)[0])
    mask = env.action_masks()
    m = game.dice_index
    can_reroll = r + 1 < len(W) and mask[: lay.num_holds].any()
    if can_reroll:
        hold, value = best_hold(rules.tables, m, W[r + 1])
        if value > T[r, m] + 1e-9:
            return hold
    return lay.write_offset + cell


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Exact expected score of optimal play on a one-column preset.")
    parser.add_argument("ruleset", help="a one-column preset (classic_down, classic_up, yu48_down, standard_down) or YAML path")
    args = parser.parse_args(argv)
    try:
        agent = OptimalAgent(args.ruleset)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{agent.expected_score:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
