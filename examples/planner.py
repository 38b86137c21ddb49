"""A one-turn expectimax planner built on the chance API, compared with the greedy agent.

    python examples/planner.py --games 20          # classic, the canonical evaluation seeds

Every chance node of a turn comes from :func:`jamb_env.rules.chance_outcomes` (each
re-roll's outcomes with their exact probabilities; :func:`first_roll_outcomes` for a
turn's first roll) and every hypothetical state from :func:`apply_outcome`,
:func:`sample_outcome` and :func:`apply_action`; what is legal comes from
:func:`legal_mask`, the points a write credits from :func:`write_gains` (what the write
kernel credits, the ``maximal`` column included), cell values from ``Ruleset.cell_values``,
and the bonus, the difference, the row groups and each column's write window from the
kernels and ``Ruleset.arrays`` (``bonus_strict``, ``bonus_per_point``, ``difference_clamp``
and every column kind included). No rule is restated here.

The planner maximises, over the rest of the turn (every roll, hold and announcement),
the expectation of a write's value ``h`` = points credited + the change of a simple
potential of the written column: the expected points its empty cells will still bring
(each cell at its *par*, the cell's expected value when one fresh turn aims at it alone,
within its column's write window, itself computed with this planner), the upper bonus
(:func:`jamb_env.rules.kernels.bonus` over a normal approximation of the final upper
sum), and the credited difference of the pars (:func:`jamb_env.rules.kernels.credited_difference`).

The outcomes of a re-roll depend only on the dice it keeps, never on the sheet, so they
are asked once per kept multiset and kept as a matrix; a turn is then a few matrix
products (a fraction of a second per game on one core). The planner assumes what
:mod:`jamb_env.rules.game` states: where a re-roll is legal, the legal holds are the
dice's canonical holds.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from functools import cache

import numpy as np

from jamb_env import JambEnv, load_ruleset
from jamb_env.rules import (
    GameState,
    Ruleset,
    apply_action,
    apply_outcome,
    chance_outcomes,
    decode,
    first_roll_outcomes,
    layout,
    legal_mask,
    max_rolls,
    new_game,
    sample_outcome,
    start_turn,
    write_gains,
)
from jamb_env.rules import kernels as rk
from jamb_env.rules.tables import UPPER_ROWS

NEG = -1e9  # "nothing to write here"


class ChanceModel:
    """The turn's chance nodes for a ruleset, from :func:`chance_outcomes`.

    A re-roll's outcomes depend only on the dice it keeps, so each kept multiset is asked
    once (:func:`jamb_env.rules.decode` names the kept dice of a hold).

    Attributes:
        Q: float64 ``(S, M)``: row ``s`` is the outcome distribution of kept multiset ``s``.
        pair: ``{(dice_index, hold): j}`` and ``pair_sub`` int ``(H,)``: the kept multiset
            of pair ``j``; ``starts`` int ``(M,)``: the first pair of each multiset (pairs
            are grouped by multiset; every multiset has a hold, re-rolling every die).
        first: float64 ``(M,)``: the distribution of a turn's first roll.
    """

    def __init__(self, rules: Ruleset):
        self.rules = rules
        M = rules.tables.num_multisets
        index = {d.tobytes(): m for m, d in enumerate(rules.tables.sorted_dice)}

        def distribution(outcomes):
            row = np.zeros(M)
            for dice, p in outcomes:
                row[index[dice.tobytes()]] = p
            return row

        num_holds = layout(rules).num_holds
        rows, subs, pair_sub, self.pair, starts = [], {}, [], {}, []
        for m in range(M):
            dice = rules.tables.sorted_dice[m]
            st = start_turn(rules, new_game(rules), dice)  # roll 1 of a fresh sheet: every hold open
            starts.append(len(pair_sub))
            for a in np.flatnonzero(legal_mask(rules, st)[:num_holds]):
                kept = dice[np.array(decode(rules, int(a)).keep)].tobytes()
                if kept not in subs:
                    subs[kept] = len(rows)
                    rows.append(distribution(chance_outcomes(rules, st, int(a), check=False)))
                self.pair[(m, int(a))] = len(pair_sub)
                pair_sub.append(subs[kept])
        self.Q = np.array(rows)
        self.pair_sub = np.array(pair_sub)
        self.starts = np.array(starts)
        self.first = distribution(first_roll_outcomes(rules, new_game(rules)))

    def hold_value(self, m: int, hold: int, V: np.ndarray) -> float:
        """Expected ``V`` (M,) after re-rolling multiset ``m`` with ``hold``."""
        return float(self.Q[self.pair_sub[self.pair[(m, hold)]]] @ V)

    def best_hold(self, V: np.ndarray) -> np.ndarray:
        """``(M, B)``: the best hold's expected ``V`` (``(M, B)`` values after the re-roll)."""
        return np.maximum.reduceat((self.Q @ V)[self.pair_sub], self.starts, axis=0)


@cache
def chance_model(rules: Ruleset) -> ChanceModel:
    """The :class:`ChanceModel` of ``rules``, built once (it does not depend on the sheet)."""
    return ChanceModel(rules)


@dataclass
class Branch:
    """One way to play the rest of a turn (no announcement, or one announced cell):
    per roll ``r`` (1-based), the writable cells, whether a re-roll is legal, and the
    value ``V[r]`` (M,) of being after roll ``r`` with each multiset."""

    cells: dict
    can_hold: dict
    T: dict
    arg: dict
    V: dict


class Planner:
    """One-turn expectimax over :class:`ChanceModel` (module docstring); an agent."""

    name = "planner"

    def __init__(self, rules: Ruleset | str = "classic"):
        rules = load_ruleset(rules)
        self.rules = rules
        self.lay = layout(rules)
        self.chance = chance_model(rules)
        R = rules.num_rows
        self.upper = np.flatnonzero(rules.arrays.is_upper).tolist()
        self.face = {r: UPPER_ROWS.index(rules.rows[r]) + 1 for r in self.upper}
        self.diff = rk.difference_rows(rules)  # (ones, max, min), None without a difference
        self.lower = [r for r in range(R) if r not in self.upper and r not in (self.diff or ())]
        # the bonus by upper sum, read from the kernel: bonus(u) - bonus(u - 1) for u = 1..most
        P = rules.arrays.P
        most = int(sum(rules.row_max[r] for r in self.upper))
        self.bonus_steps = np.diff([rk.bonus(u, P) for u in range(most + 1)]).astype(np.float64)
        # distinct values of each cell and, per roll and multiset, which one it gets
        self.uniq, self.inv = [], []
        for c in range(rules.num_cells):
            u, inv = np.unique(rules.cell_values[:, :, c], return_inverse=True)
            self.uniq.append(u.astype(np.int64))
            self.inv.append(inv.reshape(rules.cell_values.shape[:2]))
        self.par = self._pars()
        self._h: dict = {}
        self._plans: dict = {}
        self._rng = np.random.default_rng(0)

    # ------------------------------------------------------------------ values of writes
    def _pars(self) -> np.ndarray:
        """float64 ``(C, R)``: each cell's expected value when one fresh turn aims at it
        alone within its column's write window (``Ruleset.arrays.first_roll`` ..
        ``last_roll``; ``min``: kept low)."""
        rules, R = self.rules, self.rules.num_rows
        ra = rules.arrays
        sign = np.array([-1.0 if row == "min" else 1.0 for row in rules.rows])
        pars = np.zeros((len(rules.columns), R))
        for c in range(len(rules.columns)):
            first, last = int(ra.first_roll[c]), min(int(ra.last_roll[c]), rules.rolls)
            leaf = rules.cell_values[:, :, c * R : (c + 1) * R].astype(np.float64) * sign  # (K, M, R)
            leaf[: first - 1] = NEG  # not writable yet: the turn must re-roll
            V = leaf[last - 1]
            for k in range(last - 2, -1, -1):
                V = np.maximum(leaf[k], self.chance.best_hold(V))
            pars[c] = sign * (self.chance.first @ V)
        return pars

    def expected_bonus(self, mean: float, sd: float) -> float:
        """The expected bonus (points) of a column whose final upper sum is about normal
        (``mean``, ``sd``): ``sum over u of (bonus(u) - bonus(u - 1)) x P(sum >= u)``, the
        steps read from :func:`jamb_env.rules.kernels.bonus`."""
        u = np.flatnonzero(self.bonus_steps) + 1
        if sd <= 0:
            return float(self.bonus_steps[u - 1] @ (mean >= u))
        reach = [0.5 * (1 + math.erf((mean - x + 0.5) / sd / math.sqrt(2))) for x in u]
        return float(self.bonus_steps[u - 1] @ np.array(reach))

    def _potential(self, c: int, values: np.ndarray, filled: int) -> float:
        """Points column ``c`` with row ``values`` and ``filled`` bits can still expect (not yet credited)."""
        rules, par, P = self.rules, self.par[c], self.rules.arrays.P
        empty = [r for r in range(rules.num_rows) if not filled >> r & 1]
        total = sum(par[r] for r in empty if r in self.lower)
        up_empty = [r for r in self.upper if r in empty]
        if up_empty:  # each empty upper row at its par; the bonus by a normal approximation
            total += sum(par[r] for r in up_empty)
            face = [self.face[r] for r in up_empty]
            mean = sum(values[r] for r in self.upper if r not in up_empty) + 2.5 * sum(face)
            total += self.expected_bonus(mean, 1.2 * math.sqrt(sum(f * f for f in face)))
        if self.diff and any(r in empty for r in self.diff):
            ones, mx, mn = (float(par[r]) if r in empty else float(values[r]) for r in self.diff)
            total += rk.credited_difference(ones, mx, mn, P)
        return float(total)

    def _write_values(self, st: GameState, cell: int) -> np.ndarray:
        """float64 (distinct values of ``cell``,): points credited by writing each value in
        ``cell`` now (:func:`write_gains`), plus the change of the column's potential
        (cached per column state; per sheet where a ``maximal`` column reads every column)."""
        rules = self.rules
        c, r = divmod(cell, rules.num_rows)
        sheet = (st.values.tobytes(), st.filled.tobytes()) if self.lay.has_maximal else ()
        key = (cell, int(st.filled[c]), st.values[c].tobytes(), *sheet)
        h = self._h.get(key)
        if h is None:
            values, filled = st.values[c].astype(np.int64), int(st.filled[c])
            credited = rules.column_points(values, filled)  # the column's points so far
            before = credited + self._potential(c, values, filled)
            gains = write_gains(rules, st, cell, self.uniq[cell])
            h = np.empty(len(gains))
            after = values.copy()
            for j, v in enumerate(self.uniq[cell]):
                after[r] = v
                h[j] = credited + int(gains[j]) + self._potential(c, after, filled | 1 << r) - before
            self._h[key] = h
        return h

    # ------------------------------------------------------------------ turn plans
    def _branch(self, st: GameState) -> Branch:
        """Backward induction over the rest of the turn from ``st`` (its announcement fixed)."""
        rules, lay = self.rules, self.lay
        M = rules.tables.num_multisets
        R = max_rolls(rules, st)
        cells, can_hold, T, arg = {}, {}, {}, {}
        rep = st  # one state per roll: what is legal does not depend on the dice
        for r in range(st.roll, R + 1):
            mask = legal_mask(rules, rep)
            cells[r] = np.flatnonzero(mask[lay.writes])
            can_hold[r] = bool(mask[0])  # re-rolling every die is legal whenever a re-roll is
            T[r], arg[r] = np.full(M, NEG), np.full(M, -1)
            for cell in cells[r]:
                h = self._write_values(st, int(cell))[self.inv[cell][r - 1]]
                better = h > T[r]
                T[r][better], arg[r][better] = h[better], cell
            if not can_hold[r]:
                break
            dice = sample_outcome(rules, rep, 0, self._rng, check=False)  # any outcome will do
            rep = apply_outcome(rules, rep, 0, dice, check=False)
        V = {}
        last = max(cells)
        V[last] = T[last]
        for r in range(last - 1, st.roll - 1, -1):
            V[r] = np.maximum(T[r], self.chance.best_hold(V[r + 1][:, None])[:, 0])
        return Branch(cells, can_hold, T, arg, V)

    def _plan(self, st: GameState, announced: int) -> Branch:
        key = (st.values.tobytes(), st.filled.tobytes(), st.answer_due, st.copy_row, announced)
        if key not in self._plans:
            if len(self._plans) > 64:
                self._plans.clear()
            if len(self._h) > 20_000:
                self._h.clear()
            if announced == st.announced:
                self._plans[key] = self._branch(st)
            else:
                j = int(np.flatnonzero(self.lay.announce_cells == announced)[0])
                self._plans[key] = self._branch(apply_action(self.rules, st, self.lay.announce_offset + j)[0])
        return self._plans[key]

    def choose(self, st: GameState) -> tuple[int, float]:
        """The best legal action in ``st`` and its expected value (``h`` units)."""
        lay, r, m = self.lay, st.roll, st.dice_index
        mask = legal_mask(self.rules, st)
        plan = self._plan(st, st.announced)
        best, value = -1, NEG
        if plan.arg[r][m] >= 0:
            best, value = lay.write_offset + int(plan.arg[r][m]), plan.T[r][m]
        for a in np.flatnonzero(mask[: lay.num_holds]):
            v = self.chance.hold_value(m, int(a), plan.V[r + 1])
            if v > value + 1e-9:
                best, value = int(a), v
        for j in np.flatnonzero(mask[lay.announce_offset : lay.write_offset]):
            v = float(self._plan(st, int(lay.announce_cells[j])).V[r][m])
            if v > value + 1e-9:
                best, value = lay.announce_offset + int(j), v
        return best, value

    def act(self, env: JambEnv, observation=None, mask=None) -> int:
        return self.choose(env.game)[0]


# ---------------------------------------------------------------------------- comparison
def compare(games: int = 20, ruleset: str = "classic", seed_base: int | None = None) -> dict[str, list[int]]:
    """Scores of the planner and of the greedy agent on the same seeded games
    (``reset(seed=seed_base + i)``; default: the canonical evaluation seeds)."""
    import agents
    from agents.evaluation.solitaire import EVAL_SEED_BASE, play_game

    base = EVAL_SEED_BASE if seed_base is None else seed_base
    env = JambEnv(ruleset=ruleset, illegal_action="raise")
    players = {"planner": Planner(env.ruleset), "greedy": agents.load("greedy", ruleset=ruleset)}
    return {name: [play_game(agent, env, base + i)["score"] for i in range(games)] for name, agent in players.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games per agent (default 20)")
    parser.add_argument("--ruleset", default="classic", help="preset name (default classic)")
    parser.add_argument(
        "--seed", type=int, default=None, help="first game seed (default: the canonical evaluation seeds)"
    )
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    start = time.perf_counter()
    scores = compare(args.games, args.ruleset, args.seed)
    for name, s in scores.items():
        print(f"{name:8s} mean {np.mean(s):7.1f} over {len(s)} games (min {min(s)}, max {max(s)})")
    diff = np.array(scores["planner"]) - np.array(scores["greedy"])
    print(f"planner - greedy on the same games: {diff.mean():+.1f} points; {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
