"""The baselines on a shared sheet (RULES.md §6, :mod:`jamb_env.rules.match`).

A view with ``scoring == "shared"`` (:class:`jamb_env.multiplayer.SeatView`). There
every column's total goes to one player, so a write is worth what it does to the
writer's *match standing*, not its points. Both agents then value a write (greedy: at
the current dice, one roll ahead and for a forced announcement; expectimax: every leaf
of the turn plan) by the change of

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
"""

from __future__ import annotations

from functools import cache, cmp_to_key

import numpy as np

from agents.column_model import column_model, par_column, replace_state
from jamb_env import Ruleset
from jamb_env.rules import GameState, column_totals, new_game
from jamb_env.rules import kernels as rk
from jamb_env.rules import match as match_rules
from jamb_env.rules.planner import first_roll_distribution, plan_turn


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
