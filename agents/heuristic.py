"""Greedy and expectimax baselines, built on the engine's tables.

Both value a write of value ``v`` in a cell with a vectorised function of ``v`` (over all
dice multisets at once), so a decision costs a few array operations.

``greedy`` (documented rule): write the legal cell with the highest *immediate points*
(the change of its column's score: the value, plus the bonus or the difference when this
write completes them; the derived ``maximal`` column is ignored). While a re-roll is
legal it looks one roll ahead: it keeps the canonical hold with the highest expected
best immediate points after one more roll, and re-rolls only if that beats writing now;
when nothing is writable yet (a ``second`` column before roll 2) it re-rolls that way.
It announces only when it must (only announce cells left), choosing the announce cell
with the highest immediate points for the current dice.

``expectimax``: per turn, the exact expectation over all remaining rolls, holds and
outcomes (:func:`jamb_env.rules.planner.plan_turn`) of a per-cell value function ``h``:

* ``par(row)``: the expected value of the row when a whole fresh turn targets it alone
  (exact, from the same tables); every write is valued relative to it, so writing a 0
  in ``jamb`` costs about 3 points and a 0 in ``full`` about 20;
* lower rows: ``v - par``;
* upper rows: ``v - par`` plus ``bonus x`` the change of a normal-approximation
  probability of reaching the bonus (remaining upper rows expected at 2.5 dice each,
  standard deviation 1.2 dice each);
* ones, max, min: the change of the column's expected difference ``ones x (max - min)``,
  with unwritten parts at their ``par`` (:func:`jamb_env.rules.kernels.difference`,
  unclamped: with ``difference_clamp`` (``jnn``) the rules credit ``max(ones x (max -
  min), 0)``, so where max < min the model still charges a higher ``ones`` for a
  difference the rules never subtract; kept as is, the agent's play unchanged);

and at roll 1 it compares not announcing with announcing each open announce cell (the
turn then planned for that cell alone), taking the best expectation.

**Shared sheet** (a view with ``scoring == "shared"``: :class:`jamb_env.multiplayer.SeatView`;
RULES.md §6, :mod:`jamb_env.rules.match`). There every column's total goes to one player,
so a write is worth what it does to the writer's *match standing*, not its points. Both
agents then value a write (greedy: at the current dice, one roll ahead and for a forced
announcement; expectimax: every leaf of the turn plan) by the change of

    standing = E[own score] - max over opponents of E[their score],
    E[score of q] = sum over columns c of  w_c(q) * F_c,

where (:class:`_SharedStanding`)

* ``F_c``, the column's expected final total: the column scored by the core
  (:func:`jamb_env.rules.column_totals`) with each empty cell at its (rounded) ``par``;
  a write of ``v`` changes it by the agent's own estimate of the write's effect on the
  column: greedy the core's credited change of writing ``v`` instead of the par value in
  that par-completed column (:func:`jamb_env.rules.kernels.column_gains`), expectimax
  its heuristic ``h(v)`` (already relative to ``par``);
* ``w_c(q)``, the chance that player ``q`` ends up being awarded the column. Model: every
  empty cell will be written by each player with probability ``1/N`` and be non-zero
  with probability ``z_row`` (the exact chance that a fresh turn aiming at a non-zero
  value in that row gets one); the column then goes to the player with the most non-zero
  entries, a tie to the tied player whose entry comes first in the tie-break order of
  rows, which is not restated here but read off :func:`jamb_env.rules.match.column_awards`
  on two-entry probe sheets (:meth:`_SharedModel.tie_priority`). ``P(q beats q')`` is an
  exact dynamic programme over the column's cells in that order (count difference x who
  comes first); for two players ``w(p) = P(p beats o)`` exactly (under the model), for
  more it is the product over opponents, normalised to ``P(someone scores a non-zero
  entry)``. A full column is certain: the core's award.

Writing a non-zero value raises the writer's count, a zero only uses up a cell, so each
write has two ownership outcomes (``v != 0`` picks one), and its points count with the
weight of who will own them: points in a column the opponent will win help the opponent.
Separate sheets and solitaire (any view without ``scoring == "shared"``, or an agent built
with ``shared_aware=False``) play exactly as documented above.

**Joly's jokers** (rulesets with ``jokers: true``, RULES.md §6). Both agents consider them
only at their *write decision* (when they would write now: after the last roll, or when
no re-roll beats writing), where nothing later in the turn could use them better; before
that, jokers are never used. A use has a cost, its option value for the rest of the game,
which falls with the game because an unused joker is worth nothing at the end:

    cost = c_kind x (cells left, the current one included) / (all cells),

with ``c_kind`` per agent in :data:`JOKER_COSTS` (fixed joker, free joker ``J``, basket):
greedy (80, 120, 160) points, expectimax (60, 90, 60) ``h`` units. In the last turns a
use costs almost nothing, so the jokers left go on any gain. At the write decision each
agent takes the best of

* writing now: greedy its best immediate points, expectimax its best ``h``;
* each legal joker (the dice after it, :func:`joker_uses`): greedy the best immediate
  points with those dice, expectimax the turn plan's value at this roll with them (the
  best write, or a re-roll if rolls are left and better), minus the joker's cost;
* a basket, if one is left: the expected value of the turn restarted from a fresh first
  roll (the announcement and obligations stand), minus the basket's cost. Greedy: its own
  policy (above) evaluated exactly over the restarted turn, in immediate points;
  expectimax: the turn plan's value at roll 1 (the announced cell's plan if the turn
  announced, else the better of the free plan and of announcing each open cell), averaged
  over the first roll;

keeping the write on ties. After a joker the next decision is taken afresh (another
joker, a re-roll, a write). The constants were picked on joly, on seeds apart from the
canonical evaluation ones (mean scores on the same games; costs scaled as c x (1, 1.5, 2);
about ±70 points of noise on a paired difference at these sizes):

* greedy, 40 games a set: c = 0: 2582, 5: 2591, 15: 2566, 30: 2556, 60: 2778, 100: 2737,
  150: 2689, 250: 2537 (seeds 30,000,000+); 40: 2700, 60: 2758, 80: 2830 (31,000,000+);
  60: 2725, 80: 2752, 100: 2751 (32,000,000+): c = 80;
* expectimax, 30 games a set: c = 0: 3576, 20: 3650, 60: 3706, 150: 3628 (30,000,000+);
  40: 3709, 60: 3737, 90: 3685 (31,000,000+); a basket at 60 instead of 120: +28 ± 25
  (31,000,000+), -14 ± 31 (32,000,000+): (60, 90, 60).

Rulesets without jokers never reach this code and play exactly as before.
"""

from __future__ import annotations

import dataclasses
import math
from functools import cache, cmp_to_key

import numpy as np

from jamb_env import JambEnv, Ruleset
from jamb_env.rules import (
    Action,
    GameState,
    apply_action,
    column_totals,
    decode,
    encode,
    is_basket,
    is_over,
    layout,
    legal_mask,
    max_rolls,
    new_game,
    writable_bits,
)
from jamb_env.rules import kernels as rk
from jamb_env.rules import match as match_rules
from jamb_env.rules.planner import NEG, best_hold, first_roll_distribution, hold_index, hold_value, plan_turn, ranked
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


# ---------------------------------------------------------------------------- shared sheet
class _SharedModel:
    """Per-ruleset constants of the shared-sheet ownership model (module docstring)."""

    def __init__(self, rules: Ruleset):
        self.rules = rules
        self.columns = column_model(rules)
        self.priority = self.tie_priority(rules)
        self.nonzero = self._nonzero_chances()
        self.par_values = np.rint(self.columns.par).astype(np.int64)
        self._pairs: dict = {}

    @staticmethod
    def tie_priority(rules: Ruleset) -> list[int]:
        """The rows in the order in which their entries break a tie (first wins), read off
        :func:`jamb_env.rules.match.column_awards`: a probe sheet holds one non-zero entry
        of each of two players in rows ``i`` and ``j`` of the first column (1 : 1, a tie),
        and the player it awards the column to owns the row that comes first."""
        R = rules.num_rows

        def first(i: int, j: int) -> int:
            st = new_game(rules)
            values, filled = st.values.copy(), st.filled.copy()
            values[0, i] = values[0, j] = 1
            filled[0] = (1 << i) | (1 << j)
            owner = np.full((len(rules.columns), R), -1, dtype=np.int8)
            owner[0, i], owner[0, j] = 0, 1
            ms = match_rules.MatchState((replace_state(st, values, filled),), 0, 0, 2, owner)
            return -1 if match_rules.column_awards(rules, ms)[0][0] == 0 else 1

        return sorted(range(R), key=cmp_to_key(first))

    def _nonzero_chances(self) -> np.ndarray:
        """Per row, the chance that a whole fresh turn aiming at a non-zero value there gets
        one (exact, from the dice tables; the column of the pars)."""
        rules, cm = self.rules, self.columns
        p1 = first_roll_distribution(rules.tables)
        column = par_column(rules)
        out = np.zeros(rules.num_rows)
        for r in range(rules.num_rows):
            hit = (cm.cell_values[: rules.rolls, :, column * rules.num_rows + r] != 0).astype(np.float64)
            out[r] = float(plan_turn(rules.tables, hit)[0] @ p1)
        return out

    def beats(self, codes: tuple[int, ...], num_players: int) -> tuple[float, float]:
        """(P(a beats b), P(b beats a)) for a column whose rows, in :attr:`priority` order,
        are ``codes``: 0 empty, 1 a non-zero entry of ``a``, 2 of ``b``, 3 anything else
        (a zero, another player's entry). "Beats": more non-zero entries, or as many (at
        least one) and the first of them in tie-break order. Empty cells: ``a`` or ``b``
        writes a non-zero entry with probability ``z_row / N`` each."""
        key = (codes, num_players)
        hit = self._pairs.get(key)
        if hit is not None:
            return hit
        R = self.rules.num_rows
        S = np.zeros((2 * R + 1, 3))  # count difference a - b (offset R) x who came first (none, a, b)
        S[R, 0] = 1.0
        for row, code in zip(self.priority, codes):
            if code == 3:
                continue
            A = np.zeros_like(S)  # an entry of a
            A[1:, 1] = S[:-1, 0] + S[:-1, 1]
            A[1:, 2] = S[:-1, 2]
            B = np.zeros_like(S)  # an entry of b
            B[:-1, 2] = S[1:, 0] + S[1:, 2]
            B[:-1, 1] = S[1:, 1]
            if code == 1:
                S = A
            elif code == 2:
                S = B
            else:
                q = self.nonzero[row] / num_players
                S = (1.0 - 2.0 * q) * S + q * (A + B)
        out = (float(S[R + 1 :].sum() + S[R, 1]), float(S[:R].sum() + S[R, 2]))
        self._pairs[key] = out
        return out

    def win_chances(self, values_c, filled_c: int, owner_c, num_players: int) -> np.ndarray:
        """float (N,): the chance each player is awarded the column (model above)."""
        R, N = self.rules.num_rows, num_players
        rows = self.priority
        if filled_c == (1 << R) - 1:  # a full column is decided: the exact award
            out = np.zeros(N)
            awards = self._award(values_c, owner_c, N)
            if awards >= 0:
                out[awards] = 1.0
            return out
        who = [-2 if not filled_c >> r & 1 else (int(owner_c[r]) if values_c[r] != 0 else -1) for r in rows]
        if N == 2:
            a, b = self.beats(tuple(0 if w == -2 else 1 if w == 0 else 2 if w == 1 else 3 for w in who), 2)
            return np.array([a, b])
        beat = np.ones((N, N))
        for p in range(N):
            for q in range(p + 1, N):
                beat[p, q], beat[q, p] = self.beats(
                    tuple(0 if w == -2 else 1 if w == p else 2 if w == q else 3 for w in who), N
                )
        raw = beat.prod(axis=1)
        none = (
            0.0
            if any(w >= 0 for w in who)
            else float(np.prod([1.0 - self.nonzero[r] for r, w in zip(rows, who) if w == -2]))
        )
        total = raw.sum()
        return raw * ((1.0 - none) / total) if total > 0 else raw

    def _award(self, values_c, owner_c, num_players: int) -> int:
        """The core's award of a full column (:func:`jamb_env.rules.match.column_awards`)."""
        rules = self.rules
        st = new_game(rules)
        values, filled = st.values.copy(), st.filled.copy()
        values[0], filled[0] = values_c, (1 << rules.num_rows) - 1
        owner = np.full((len(rules.columns), rules.num_rows), -1, dtype=np.int8)
        owner[0] = owner_c
        ms = match_rules.MatchState((replace_state(st, values, filled),), 0, 0, int(num_players), owner)
        return int(match_rules.column_awards(rules, ms)[0][0])


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


@cache
def shared_model(rules: Ruleset) -> _SharedModel:
    return _SharedModel(rules)


class _SharedStanding:
    """The writer's expected match standing on a shared sheet and what a write does to it
    (module docstring). Built once per turn from the view."""

    def __init__(self, rules: Ruleset, st: GameState, owner: np.ndarray, player: int, num_players: int):
        self.rules, self.st, self.owner, self.p, self.N = rules, st, owner, int(player), int(num_players)
        self.model = shared_model(rules)
        C, R = len(rules.columns), rules.num_rows
        full = (1 << R) - 1
        self.completed = st.values.astype(np.int64)  # every empty cell at its par
        for c in range(C):
            for r in range(R):
                if not int(st.filled[c]) >> r & 1:
                    self.completed[c, r] = self.model.par_values[r]
        totals = column_totals(rules, replace_state(st, self.completed, np.full(C, full, dtype=np.int64)))
        self.F = np.array([float(totals[col]) for col in rules.columns])
        self.W = np.array([self.model.win_chances(st.values[c], int(st.filled[c]), owner[c], self.N) for c in range(C)])
        self.E = self.W.T @ self.F
        self.standing = self._standing(self.E)
        self._after: dict = {}

    def _standing(self, E: np.ndarray) -> np.ndarray:
        others = np.delete(E, self.p, axis=-1)
        return E[..., self.p] - others.max(axis=-1)

    def ownership_after(self, c: int, r: int) -> tuple[np.ndarray, np.ndarray]:
        """(w after a non-zero write, w after a zero) of column ``c`` when the writer takes row ``r``."""
        key = (c, r)
        if key not in self._after:
            st, m = self.st, self.model
            filled = int(st.filled[c]) | (1 << r)
            owner = self.owner[c].copy()
            owner[r] = self.p
            values = st.values[c].astype(np.int64)
            values[r] = 1
            nz = m.win_chances(values, filled, owner, self.N)
            values[r] = 0
            self._after[key] = (nz, m.win_chances(values, filled, owner, self.N))
        return self._after[key]

    def par_gains(self, c: int, r: int, v: np.ndarray) -> np.ndarray:
        """The change of ``F_c`` when ``v`` instead of the par value goes in row ``r``: the
        core's credited change in the par-completed column (greedy's estimate)."""
        R = self.rules.num_rows
        col = self.completed[c].copy()
        f = ((1 << R) - 1) & ~(1 << r)
        flat = np.asarray(v, dtype=np.int64).reshape(-1)
        cand = np.concatenate([flat, [self.model.par_values[r]]])
        out = np.zeros(len(cand), dtype=np.int64)
        rk.column_gains(
            col, f, r, cand, self.rules.arrays, out, np.zeros(4, dtype=np.int64), np.zeros(R, dtype=np.int64)
        )
        return (out[:-1] - out[-1]).astype(np.float64).reshape(np.shape(v))

    def value(self, c: int, r: int, v: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Change of the standing for writing values ``v`` (array) in (c, r), the column's
        expected total changing by ``delta`` (same shape)."""
        v = np.asarray(v)
        nz, zero = self.ownership_after(c, r)
        w_after = np.where((v != 0)[..., None], nz, zero)  # (..., N)
        F_after = (self.F[c] + np.asarray(delta, dtype=np.float64))[..., None]
        E = self.E - self.W[c] * self.F[c] + w_after * F_after
        return self._standing(E) - self.standing


def _cells(rules: Ruleset, bits: list[int]) -> list[tuple[int, int]]:
    R = rules.num_rows
    return [(c, r) for c, b in enumerate(bits) for r in range(R) if b >> r & 1]


# ---------------------------------------------------------------------------- Joly's jokers
#: Option value of an unused joker at the start of a game, per agent (points for greedy,
#: ``h`` units for expectimax): (fixed joker, free joker ``J``, basket). The cost of a use
#: is this times the fraction of the sheet's cells still empty (module docstring).
JOKER_COSTS = {"greedy": (80.0, 120.0, 160.0), "expectimax": (60.0, 90.0, 60.0)}


def joker_cost(rules: Ruleset, st: GameState, a: int, costs: tuple[float, float, float]) -> float:
    """The cost of using joker or basket action ``a`` now: its option value ``costs``
    (fixed, free, basket) times (cells left / all cells)."""
    act = decode(rules, int(a))
    kind = 2 if act.kind == "basket" else 1 if act.joker == "J" else 0
    return costs[kind] * (rules.num_cells - st.turn) / rules.num_cells


def basket_action(rules: Ruleset) -> int:
    """The basket action of a ruleset with Joly's jokers (:func:`jamb_env.rules.encode`)."""
    return encode(rules, Action("basket"))


def joker_uses(rules: Ruleset, st: GameState, mask: np.ndarray) -> list[tuple[int, int]]:
    """(action, multiset index of the dice after it) for every legal joker (no basket)."""
    lay = layout(rules)
    out = []
    for a in np.flatnonzero(mask[lay.joker_offset :]):
        a = lay.joker_offset + int(a)
        if not is_basket(rules, a):
            out.append((a, int(apply_action(rules, st, a, check=False)[0].dice_index)))
    return out


def _best_option(now: float, jokers: list[tuple[int, float]], basket: tuple[int, float] | None) -> int | None:
    """The joker or basket action whose value beats writing now (``now``) and every other
    option, else None (write); ties go to writing, then to the lower action."""
    best, best_value = None, now + 1e-9
    for a, value in jokers + ([basket] if basket is not None else []):
        if value > best_value:
            best, best_value = a, value
    return best


class _TurnAgent:
    """Shared plumbing: per-turn caches keyed by (turn, announcement, seat on a shared sheet).

    Args:
        shared_aware: on a shared sheet (a view with ``scoring == "shared"``), value writes
            by the match standing (module docstring); False plays every sheet as a solitaire
            one (the behaviour before shared-sheet valuation, for comparisons).
        joker_costs: (fixed joker, free joker, basket) option values at the game's start
            (default :data:`JOKER_COSTS` of the agent; Joly's jokers only).
    """

    name = "base"
    joker_costs = (0.0, 0.0, 0.0)

    def __init__(self, shared_aware: bool = True, joker_costs: tuple[float, float, float] | None = None):
        self.shared_aware = bool(shared_aware)
        costs = joker_costs if joker_costs is not None else JOKER_COSTS.get(self.name, (0.0, 0.0, 0.0))
        self.joker_costs = tuple(float(c) for c in costs)
        self._key = None
        self._cache: dict = {}

    def _turn_cache(self, st: GameState, env=None) -> dict:
        key = (
            st.turn,
            st.announced,
            st.answer_due,
            st.copy_row,
            st.values.tobytes(),
            st.filled.tobytes(),
            st.roll if st.pure else 0,
        )  # a pure roll (jnn) opens cells at that roll only
        if self._shared(env):
            key += (int(env.player), int(env.num_players), np.asarray(env.owner).tobytes())
        if key != self._key:
            self._key, self._cache = key, {}
        return self._cache

    def _shared(self, env) -> bool:
        """True when ``env`` is a seat on a shared sheet and this agent plays for the standing."""
        return (
            self.shared_aware
            and env is not None
            and getattr(env, "scoring", None) == "shared"
            and getattr(env, "owner", None) is not None
        )

    def _standing(self, env, st: GameState) -> _SharedStanding | None:
        """The turn's :class:`_SharedStanding` (cached), or None off a shared sheet."""
        if not self._shared(env):
            return None
        cache = self._turn_cache(st, env)
        if "standing" not in cache:
            cache["standing"] = _SharedStanding(env.ruleset, st, np.asarray(env.owner), env.player, env.num_players)
        return cache["standing"]


class GreedyAgent(_TurnAgent):
    """Immediate points (on a shared sheet: the immediate change of the match standing),
    with a one-roll look-ahead for holds (module docstring)."""

    name = "greedy"

    def act(self, env: JambEnv, observation, mask) -> int:
        rules, st = env.ruleset, env.game
        model = column_model(rules)
        lay = layout(rules)
        r, m = st.roll, st.dice_index
        standing = self._standing(env, st)
        if standing is None:
            points = model.immediate_points
        else:  # shared sheet: the change of the match standing

            def points(st, c, row, v):
                return standing.value(c, row, v, standing.par_gains(c, row, v))

        write_now = _cells(rules, writable_bits(rules, st, r))
        if not write_now and mask[: lay.num_holds].any():  # nothing to write yet (``second``: before roll 2): re-roll
            best_next = self._best_points(rules, st, points, r + 1)
            return best_hold(rules.tables, m, best_next)[0]
        if not write_now:  # only announce cells are open: the announcement is forced
            best, best_pts = None, -np.inf
            for j in np.flatnonzero(mask[lay.announce_offset : lay.write_offset]):
                c, row = divmod(int(lay.announce_cells[j]), rules.num_rows)
                pts = points(st, c, row, model.cell_values[r - 1, m : m + 1, c * rules.num_rows + row])[0]
                if pts > best_pts:
                    best, best_pts = lay.announce_offset + int(j), pts
            return int(best)
        gains = [
            points(st, c, row, model.cell_values[r - 1, m : m + 1, c * rules.num_rows + row])[0] for c, row in write_now
        ]
        i = int(np.argmax(gains))
        if mask[: lay.num_holds].any():
            nxt = _cells(rules, writable_bits(rules, impure(st), r + 1))
            best_next = np.full(rules.tables.num_multisets, NEG)
            for c, row in nxt:
                best_next = np.maximum(best_next, points(st, c, row, model.cell_values[r, :, c * rules.num_rows + row]))
            hold, value = best_hold(rules.tables, m, best_next)
            if value > gains[i] + 1e-9:
                return hold
        if st.jokers and rules.jokers:  # Joly: a joker or a basket instead of writing now?
            use = self._joker(env, st, mask, points, write_now, gains[i])
            if use is not None:
                return use
        c, row = write_now[i]
        return lay.write_offset + c * rules.num_rows + row

    def _best_points(self, rules: Ruleset, st: GameState, points, roll: int) -> np.ndarray:
        """float (M,): the best immediate points of a write after roll ``roll`` for every
        dice multiset (NEG where no cell is writable)."""
        model = column_model(rules)
        best = np.full(rules.tables.num_multisets, NEG)
        for c, row in _cells(rules, writable_bits(rules, st if roll == st.roll else impure(st), roll)):
            best = np.maximum(best, points(st, c, row, model.cell_values[roll - 1, :, c * rules.num_rows + row]))
        return best

    def fresh_turn_value(self, env, st: GameState, points) -> float:
        """Greedy's expected best immediate points over a whole turn from a fresh first
        roll (what a basket restarts to): its own policy evaluated exactly (re-roll with
        the one-roll look-ahead hold when that beats writing, else write the best cell);
        the announcement, answer and copy obligations of ``st`` stand."""
        rules, tables = env.ruleset, env.ruleset.tables
        R = max_rolls(rules, st)
        best = [self._best_points(rules, st, points, k) for k in range(1, R + 1)]
        masks, subs = hold_index(tables)
        pad = np.full(1, NEG)
        V = best[-1]
        for k in range(R - 2, -1, -1):  # greedy after roll k + 1
            look = np.concatenate([tables.transition @ best[k + 1], pad])[subs]  # (M, H): expected best points per hold
            j = look.argmax(axis=1)
            rows = np.arange(len(j))
            cont = np.concatenate([tables.transition @ V, pad])[subs[rows, j]]
            V = np.where(look[rows, j] > best[k] + 1e-9, cont, best[k])
        return float(first_roll_distribution(tables) @ V)

    def _joker(self, env, st: GameState, mask, points, write_now, now: float) -> int | None:
        """At the write decision: the joker with the best immediate points after it, or a
        basket, if it beats writing now net of its cost (module docstring); else None."""
        rules = env.ruleset
        best = self._best_points(rules, st, points, st.roll)
        jokers = [
            (a, float(best[m]) - joker_cost(rules, st, a, self.joker_costs)) for a, m in joker_uses(rules, st, mask)
        ]
        basket = None
        b = basket_action(rules)
        if mask[b]:
            cache = self._turn_cache(st, env)
            if "fresh" not in cache:
                cache["fresh"] = self.fresh_turn_value(env, st, points)
            basket = (b, cache["fresh"] - joker_cost(rules, st, b, self.joker_costs))
        return _best_option(now, jokers, basket)


class ExpectimaxAgent(_TurnAgent):
    """Exact turn expectation of the heuristic cell values, with announcements."""

    name = "expectimax"
    explain_unit = "expected value of the rest of the turn, in points relative to each row's par"

    def explain(self, env: JambEnv) -> list[tuple[int, float]]:
        """Every legal action now with its expected heuristic value, best first (ValueError
        once the game is over: no action is legal)."""
        rules, st = env.ruleset, env.game
        if is_over(rules, st):
            raise ValueError(f"no legal action: the game is over (the {self.name} agent explains a game in play)")
        lay = layout(rules)
        mask = env.action_masks()
        self.act(env, env.observe(), mask)  # fills the turn cache
        cache = self._turn_cache(st, env)
        key = ("cell", st.announced) if st.announced >= 0 else ("free",)
        W, T, arg = cache[key]
        r, m = st.roll, st.dice_index
        out, joker_values = [], None
        for a in np.flatnonzero(mask):
            a = int(a)
            if a < lay.num_holds:
                out.append((a, hold_value(rules.tables, m, a, W[r])))
            elif a < lay.write_offset:
                cell = int(lay.announce_cells[a - lay.announce_offset])
                if ("cell", cell) not in cache:
                    cache[("cell", cell)] = self._plan(env, st, only_cell=cell)
                out.append((a, float(cache[("cell", cell)][0][r - 1, m])))
            elif a >= lay.joker_offset:  # Joly: the values the write decision compares
                if joker_values is None:
                    jokers, basket = self._joker_values(env, st, mask)
                    joker_values = dict(jokers + ([basket] if basket else []))
                out.append((a, joker_values[a]))
            else:
                cell = a - lay.write_offset
                c, row = divmod(cell, rules.num_rows)
                model = column_model(rules)
                h = self._write_values(env, st, c, row, model.cell_values[r - 1, m : m + 1, cell])[0]
                out.append((a, float(h)))
        return ranked(out)

    def _write_values(self, env, st: GameState, c: int, row: int, v: np.ndarray) -> np.ndarray:
        """The leaf value of writing values ``v`` in (c, row): the heuristic ``h``, or on a
        shared sheet the change of the match standing with ``h`` as the column's change."""
        model = column_model(env.ruleset)
        h = model.heuristic(st, c, row, v)
        standing = self._standing(env, st)
        return h if standing is None else standing.value(c, row, v, h)

    def _plan(self, env: JambEnv, st: GameState, only_cell: int | None = None):
        """(W, T, argmax cell per roll and multiset) for the rest of the turn."""
        rules = env.ruleset
        model = column_model(rules)
        R = max_rolls(rules, st)
        M = rules.tables.num_multisets
        T = np.full((R, M), NEG)
        arg = np.full((R, M), -1, dtype=np.int64)
        h_cache: dict[int, np.ndarray] = {}
        if only_cell is not None:
            per_roll = [[divmod(only_cell, rules.num_rows)]] * R
        else:
            per_roll = [
                _cells(rules, writable_bits(rules, st if k + 1 == st.roll else impure(st), k + 1)) for k in range(R)
            ]
        self._prepare_leaves(env, st, {c * rules.num_rows + row for cells in per_roll for c, row in cells})
        for k in range(R):
            for c, row in per_roll[k]:
                cell = c * rules.num_rows + row
                if cell not in h_cache:
                    h_cache[cell] = self._write_values(env, st, c, row, model.cell_values[:R, :, cell])
                h = h_cache[cell][k]
                better = h > T[k]
                T[k] = np.where(better, h, T[k])
                arg[k] = np.where(better, cell, arg[k])
        return plan_turn(rules.tables, T), T, arg

    def _prepare_leaves(self, env, st: GameState, cells: set[int]) -> None:
        """Hook called with every cell a turn plan is about to value (the ``search``
        agent batches its network call here); expectimax needs nothing."""

    def act(self, env: JambEnv, observation, mask) -> int:
        rules, st = env.ruleset, env.game
        lay = layout(rules)
        cache = self._turn_cache(st, env)
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
                self._prepare_leaves(env, st, {int(lay.announce_cells[j]) for j in announce})
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
        if st.jokers and rules.jokers:  # Joly: a joker or a basket instead of writing now?
            jokers, basket = self._joker_values(env, st, mask)
            use = _best_option(float(T[r - 1, m]), jokers, basket)
            if use is not None:
                return use
        return lay.write_offset + int(arg[r - 1, m])

    def fresh_turn_value(self, env, st: GameState) -> float:
        """The expected ``h`` of the turn restarted from a fresh first roll (a basket): the
        turn plan's value at roll 1 (the announced cell's plan if the turn announced,
        else the better of the free plan and announcing each cell then open), averaged
        over the first roll."""
        rules = env.ruleset
        lay = layout(rules)
        cache = self._turn_cache(st, env)
        if "fresh" in cache:
            return cache["fresh"]
        if st.announced >= 0:
            key = ("cell", st.announced)
            if key not in cache:
                cache[key] = self._plan(env, st, only_cell=st.announced)
            best = cache[key][0][0]
        else:
            if ("free",) not in cache:
                cache[("free",)] = self._plan(env, st)
            best = cache[("free",)][0][0]
            restart = legal_mask(rules, replace_roll(st, 1))  # what roll 1 of the restarted turn allows
            for j in np.flatnonzero(restart[lay.announce_offset : lay.write_offset]):
                cell = int(lay.announce_cells[j])
                if ("cell", cell) not in cache:
                    cache[("cell", cell)] = self._plan(env, st, only_cell=cell)
                best = np.maximum(best, cache[("cell", cell)][0][0])
        cache["fresh"] = float(first_roll_distribution(rules.tables) @ best)
        return cache["fresh"]

    def _joker_values(self, env, st: GameState, mask) -> tuple[list[tuple[int, float]], tuple[int, float] | None]:
        """([(joker action, value)], (basket action, value) or None) at the write decision:
        a joker's value is the turn plan's value at this roll with the dice after it, a
        basket's :meth:`fresh_turn_value`, each net of its cost (module docstring)."""
        rules = env.ruleset
        cache = self._turn_cache(st, env)
        W = cache[("cell", st.announced) if st.announced >= 0 else ("free",)][0]
        r = st.roll
        jokers = [
            (a, float(W[r - 1, m]) - joker_cost(rules, st, a, self.joker_costs)) for a, m in joker_uses(rules, st, mask)
        ]
        b = basket_action(rules)
        basket = (b, self.fresh_turn_value(env, st) - joker_cost(rules, st, b, self.joker_costs)) if mask[b] else None
        return jokers, basket
