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

**Shared sheet** (a view with ``scoring == "shared"``, RULES.md §6): both agents value a
write by the change of the writer's expected *match standing* instead of its points
(:mod:`agents.shared_sheet`); separate sheets and solitaire (or an agent built with
``shared_aware=False``) play exactly as documented above.

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

import numpy as np

from agents.base import checked_mask
from agents.column_model import column_model, impure, replace_roll
from agents.column_model import replace_state as replace_state  # re-exported (tests, search)
from agents.shared_sheet import _SharedStanding
from agents.shared_sheet import shared_model as shared_model
from jamb_env import JambEnv, Ruleset
from jamb_env.rules import (
    GameState,
    apply_action,
    decode,
    is_basket,
    is_over,
    layout,
    legal_mask,
    max_rolls,
    writable_bits,
)
from jamb_env.rules.planner import NEG, best_hold, first_roll_distribution, hold_index, hold_value, plan_turn, ranked


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
        mask = checked_mask(env, mask)
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
        b = layout(rules).basket
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
        mask = checked_mask(env, mask)
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
        b = layout(rules).basket
        basket = (b, self.fresh_turn_value(env, st) - joker_cost(rules, st, b, self.joker_costs)) if mask[b] else None
        return jokers, basket
