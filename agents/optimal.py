"""Exact optimal play of one column filled in a fixed order (dynamic programming).

For a sheet of one ``down`` or ``up`` column (presets ``classic_down``, ``classic_up``,
``yu48_down``, ``standard_down``), the game is a finite Markov decision process whose
state between turns is small: the next cell (the order is fixed), the upper sum so far
(capped at the bonus threshold, or exact where the bonus grows per point), and the values
of ones / max / min written while the difference is not yet credited. Each turn is solved
exactly over all rolls, holds and outcomes with the engine's hold-transition tables
(:mod:`jamb_env.rules.planner`), so the value of the empty sheet is the exact expected score of
optimal play.

    python -m agents.optimal classic_down      # prints the exact expected score, 4 decimals

The same solver, given a row order, values any column played in a fixed order; the
``columnwise`` agent builds on it.
"""

from __future__ import annotations

import argparse
import sys
from functools import cache

import numpy as np

from jamb_env import JambEnv, Ruleset, load_ruleset
from jamb_env.rules import is_over, layout
from jamb_env.rules import kernels as rk
from jamb_env.rules.planner import best_hold, first_roll_distribution, hold_value, plan_turn, ranked

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
        P = rules.arrays.P
        self.rolls = [rules.rolls] * n_steps
        # the game's last turn (kernels.max_rolls), unless the caller says otherwise
        self.rolls[-1] = int(rk.max_rolls(rules.num_cells - 1, P)) if rolls_last is None else rolls_last
        self._upper_rows = set(np.flatnonzero(rules.arrays.is_upper).tolist())
        self._last_upper_step = max((k for k, r in enumerate(order) if r in self._upper_rows), default=-1)
        self._diff = rk.difference_rows(rules)
        self._cap = None if rules.bonus_per_point else int(rk.bonus_floor(P))
        self._scratch = (np.zeros(4, dtype=np.int64), np.zeros(rules.num_rows, dtype=np.int64))
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
                    nxt.setdefault(self._next(k, x, int(v)), len(nxt))
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

    def _column(self, k: int, x: tuple) -> tuple[np.ndarray, int]:
        """A column (values (R,), filled bitmask) in state ``x`` before step ``k``: the
        rows of the first ``k`` steps written, at values that the rules score as ``x``
        (the upper sum ``u`` in upper rows, the difference parts still pending in their rows)."""
        u, ones, mx, mn = x
        row = self.order[k]
        values = np.zeros(self.rules.num_rows, dtype=np.int64)
        for r, part in zip(self._diff or (), (ones, mx, mn)):
            if part is not None:
                values[r] = part
        # the rest of the upper sum in another upper row (any row: column_parts sums them all);
        # with none, only a capped sum differs from the true one, and a capped bonus cannot tell
        rest = u - int(sum(values[q] for q in self._upper_rows))
        spare = [q for q in sorted(self._upper_rows) if q != row and (self._diff is None or q != self._diff[0])]
        if rest and spare:
            values[spare[0]] += rest
        filled = sum(1 << r for r in self.order[:k])
        return values, filled

    def _points(self, k: int, x: tuple, v: np.ndarray) -> np.ndarray:
        """int64: the points writing each value of ``v`` at step ``k`` from state ``x``
        credits (:func:`jamb_env.rules.kernels.column_gains`: the value, and the bonus or the
        difference it completes)."""
        values, filled = self._column(k, x)
        out = np.zeros(len(v), dtype=np.int64)
        rk.column_gains(
            values, filled, self.order[k], np.asarray(v, dtype=np.int64), self.rules.arrays, out, *self._scratch
        )
        return out

    def _next(self, k: int, x: tuple, v: int) -> tuple:
        """The state after writing value ``v`` at step ``k`` from state ``x``: what of the
        column still matters for the points to come."""
        u, ones, mx, mn = x
        row = self.order[k]
        if row in self._upper_rows:
            u = u + v
            if self._cap is not None:
                u = min(u, self._cap)
            if k == self._last_upper_step:
                u = 0
        if self._diff is not None and row in self._diff:
            if row == self._diff[0]:
                ones = v
            elif row == self._diff[1]:
                mx = v
            else:
                mn = v
            if ones is not None and mx is not None and mn is not None:
                ones = mx = mn = None
            elif mx is not None and mn is not None:  # only max - min matters now
                mx, mn = mx - mn, 0
        return (u, ones, mx, mn)

    def _terminal(self, k: int, idx: np.ndarray | None = None) -> np.ndarray:
        """float64 (R, N, M): value of writing now, for the states ``idx`` of step ``k``."""
        states = list(self.states[k])
        if idx is not None:
            states = [states[i] for i in idx]
        nxt, V1 = self.states[k + 1], self.V[k + 1]
        values = self._values[k]
        G = np.empty((len(states), len(values)))
        for i, x in enumerate(states):
            G[i] = self._points(k, x, values) + V1[[nxt[self._next(k, x, int(v))] for v in values]]
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
            x = self._next(k, x, int(values[row]))
        return len(self.order), x

    def turn_tables(self, k: int, x: tuple) -> np.ndarray:
        """(R, M) values of the current turn (``plan_turn``) for state ``x`` at step ``k``."""
        i = self.states[k][x]
        return plan_turn(self.tables, self._terminal(k, np.array([i])))[:, 0, :]


def front_order(rules: Ruleset, kind: str) -> list[int] | None:
    """The row order the rules impose on a column of ``kind``: its one front when that
    front runs over every row (``down``, ``up``: :func:`jamb_env.rules.kernels.column_fronts`),
    else None (any other kind leaves a choice)."""
    if rk.COLUMN_KINDS[kind].opens != rk.OPEN_FRONT:
        return None
    fronts = rk.column_fronts(kind, rules.rows)
    return list(fronts[0]) if len(fronts) == 1 and sorted(fronts[0]) == list(range(rules.num_rows)) else None


def fixed_order(rules: Ruleset, kind: str) -> list[int]:
    """Row order of a column played in a fixed order: the rules' (:func:`front_order`),
    or top-down for a kind that leaves the order free (``free``, ``announce``)."""
    order = front_order(rules, kind)
    return list(range(rules.num_rows)) if order is None else order


@cache
def solver_for(rules: Ruleset, column: int, rolls_last: int | None = None) -> ColumnSolver:
    return ColumnSolver(rules, fixed_order(rules, rules.columns[column]), column, rolls_last)


class OptimalAgent:
    """Optimal play on a one-column sheet filled in a fixed order (``down`` or ``up``)."""

    name = "optimal"

    def __init__(self, ruleset: str | Ruleset):
        rules = load_ruleset(ruleset)
        self.check_ruleset(rules)
        self.rules = rules
        self.solver = solver_for(rules, 0)
        self._cache: tuple | None = None

    @staticmethod
    def check_ruleset(rules: Ruleset) -> None:
        """Raises ValueError unless ``rules`` is a sheet of one ``down`` or ``up`` column (no
        derived column), the sheets the exact solver plays; solves nothing."""
        if len(rules.columns) != 1 or front_order(rules, rules.columns[0]) is None or rules.derived_columns:
            raise ValueError(
                f"the exact solver needs a sheet of one down or up column; {rules.name} has "
                f"{', '.join(rules.columns)} (try classic_down, classic_up, yu48_down, standard_down)"
            )

    @property
    def expected_score(self) -> float:
        return self.solver.expected_score

    def act(self, env: JambEnv, observation, mask) -> int:
        check_env(self, env)
        return play_column_turn(env, self.solver, 0, self)

    explain_unit = "expected final score (points) with optimal play after the action"

    def explain(self, env: JambEnv) -> list[tuple[int, float]]:
        """Every legal action now with the exact expected final score, best first."""
        check_env(self, env)
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


def check_env(agent, env) -> None:
    """ValueError unless ``env`` plays the ruleset ``agent`` solved (``agent.rules``) and its
    game is not over: the solver's tables fit that ruleset's sheet alone, and a finished
    game has no action to choose."""
    if not env.ruleset.same_rules(agent.rules):
        raise ValueError(
            f"this {agent.name} agent was solved for ruleset {agent.rules.name!r}, the env plays "
            f"{env.ruleset.name!r}: load one for it (agents.load({agent.name!r}, ruleset=...))"
        )
    if is_over(env.ruleset, env.game):
        raise ValueError(f"no legal action: the game is over (the {agent.name} agent acts on a game in play)")


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
    if column in lay.announce_columns and game.announced < 0:
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
    parser.add_argument(
        "ruleset", help="a one-column preset (classic_down, classic_up, yu48_down, standard_down) or YAML path"
    )
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
