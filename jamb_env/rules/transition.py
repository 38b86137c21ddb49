"""The one state record and the one transition of a game (RULES.md §1-4, §6).

Every front end steps a game through :func:`transition` (and rolls a turn's first roll
through :func:`start_turn`): the single-game functions (:func:`jamb_env.rules.apply_action`,
:func:`jamb_env.rules.start_turn`, one slot in, one slot out), the engine of every env
(:class:`jamb_env.engine.batch.Engine`: ``JambEnv``, ``JambVecEnv``, the Gymnasium vector env,
the multiplayer envs), the match and the chance API. OpenSpiel's ``DoApplyAction`` is the
model: dice, holds, announcements, jokers, the write and the next turn's roll in one place.

The state of N games is one :class:`Slots` record of arrays (first axis: the game); one
game is a :class:`GameState` (the same fields, one slot, without the dice stream).
Dice always come from the game's stream: the k-th die rolled is ``stream[i, k]`` and
``pos[i]`` counts the dice rolled so far; a caller with explicit dice writes them into
the stream first (:func:`apply`).

The formulas (what is legal, what a write credits) are the kernels of
:mod:`jamb_env.rules.kernels`; this module only sequences them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import NamedTuple

import numpy as np

from jamb_env.rules import kernels as rk
from jamb_env.rules._jit import kernel


@dataclass(frozen=True, slots=True)
class GameState:
    """The full state of one solitaire game (no dice stream: that is the env's).

    Attributes:
        values: int16 ``(C, R)`` written values (points), 0 where empty.
        filled: int64 ``(C,)`` bitmask of the written rows of each column.
        dice: int8 ``(n,)`` sorted faces of the current roll; zeros before roll 1.
        dice_index: multiset index of ``dice`` (see ``DiceTables``); -1 before roll 1.
        roll: 0 before the turn's first roll, then 1..max rolls of the turn.
        announced: the announced cell ``c * R + r`` or -1.
        answer_due: the row that the answer column takes this turn (RULES.md §1,
            ``answer``) or -1.
        turn: cells written so far (0..num_cells).
        copy_row: the row the ``copy`` column offers this turn (the row the previous
            player just wrote, RULES.md §6) or -1; always -1 without a ``copy`` column.
        jokers: Joly's jokers left, packed (bit v - 1: fixed joker v; bits 6-7: free
            jokers; bits 8-9: baskets; :func:`jamb_env.rules.jokers_left`); 0 without jokers.
        pure: 1 when the current roll is pure (every die rolled: roll 1, a re-roll
            keeping nothing, a basket), else 0 (``announce_pure``, RULES.md §5).
    """

    values: np.ndarray
    filled: np.ndarray
    dice: np.ndarray
    dice_index: int = -1
    roll: int = 0
    announced: int = -1
    answer_due: int = -1
    turn: int = 0
    copy_row: int = -1
    jokers: int = 0
    pure: int = 0

    def copy(self) -> GameState:
        return replace(self, values=self.values.copy(), filled=self.filled.copy(), dice=self.dice.copy())


#: The scalar fields of a :class:`GameState`, in order (int64 ``(N,)`` arrays in :class:`Slots`).
SCALARS = ("dice_index", "roll", "announced", "answer_due", "turn", "copy_row", "jokers", "pure")


class Slots(NamedTuple):
    """The state of N games, one slot each (every array's first axis is the game).

    values int16 ``(N, C, R)`` · filled int64 ``(N, C)`` row bitmasks · dice int8 ``(N, n)``
    sorted · dice_index, roll, announced, answer_due, turn, copy_row, jokers, pure int64
    ``(N,)`` (as :class:`GameState`) · score int64 ``(N,)`` points credited so far ·
    stream int8 ``(N, L)`` the dice stream · pos int64 ``(N,)`` dice rolled so far.
    """

    values: np.ndarray
    filled: np.ndarray
    dice: np.ndarray
    dice_index: np.ndarray
    roll: np.ndarray
    announced: np.ndarray
    answer_due: np.ndarray
    turn: np.ndarray
    copy_row: np.ndarray
    jokers: np.ndarray
    pure: np.ndarray
    score: np.ndarray
    stream: np.ndarray
    pos: np.ndarray


def stream_length(rules) -> int:
    """Dice a game can roll at most: every die of every roll of every turn, and with
    jokers every roll of the two turns a basket restarts."""
    baskets = 2 * rules.max_rolls if rules.jokers else 0
    return rules.dice * (rules.num_cells * rules.rolls + rules.last_turn_rolls - rules.rolls + baskets)


def stream_bounds(rules, st: GameState) -> tuple[int, int]:
    """``(low, high)``: the fewest and the most dice a game can have drawn from its stream
    to reach ``st`` (its stream position). Each turn started rolls ``n`` dice at roll 1,
    each later roll up to ``n``; a turn's rolls are ``rolls`` before the last turn; each
    basket used (jokers) rolled a new roll 1 after up to ``max_rolls`` rolls. A position
    outside the bounds is unreachable; at ``high`` or below, the rest of a
    :func:`stream_length` stream holds every die the game can still roll."""
    n = rules.dice
    used = 2 - (int(st.jokers) >> rk.JOKER_BASKET_SHIFT & 3) if rules.jokers else 0
    turn, roll = int(st.turn), int(st.roll)
    low = n * (turn + used + (1 if roll else 0))
    if turn >= rules.num_cells:  # over: the last turn had its own rolls
        high = n * (rules.rolls * (turn - 1) + rules.last_turn_rolls + used * rules.max_rolls)
    else:
        high = n * (rules.rolls * turn + roll + used * rules.max_rolls)
    return low, high


def new_state(rules) -> GameState:
    """The state every game starts in, the one definition of it: an empty sheet before the
    first roll (the :class:`GameState` defaults: no dice, roll 0, nothing announced or
    due), with every joker (Joly's) where the ruleset has them."""
    C, R = len(rules.columns), rules.num_rows
    return GameState(
        values=np.zeros((C, R), dtype=np.int16),
        filled=np.zeros(C, dtype=np.int64),
        dice=np.zeros(rules.dice, dtype=np.int8),
        jokers=rk.JOKERS_FULL if rules.jokers else 0,
    )


def new_slots(rules, num_games: int, stream_len: int | None = None) -> dict[str, np.ndarray]:
    """The arrays of :class:`Slots` for ``num_games`` games in :func:`new_state` (score 0,
    no die rolled, an empty stream), as a dict, so a record with more fields, such as the
    engine's, can be built from it."""
    st = new_state(rules)
    L = stream_length(rules) if stream_len is None else stream_len
    fields = {k: np.asarray(getattr(st, k)) for k in ("values", "filled", "dice")}
    fields |= {k: np.asarray(getattr(st, k), dtype=np.int64) for k in SCALARS}
    out = {k: np.repeat(v[None], num_games, axis=0) for k, v in fields.items()}
    return out | dict(
        score=np.zeros(num_games, dtype=np.int64),
        stream=np.zeros((num_games, L), dtype=np.int8),
        pos=np.zeros(num_games, dtype=np.int64),
    )


def read_state(g, i: int) -> GameState:
    """Slot ``i`` of the record ``g`` (:class:`Slots` or any record with its fields) as a
    :class:`GameState` (copies)."""
    return GameState(
        g.values[i].copy(), g.filled[i].copy(), g.dice[i].copy(), *(int(getattr(g, k)[i]) for k in SCALARS)
    )


def write_state(g, i, st: GameState) -> None:
    """Put ``st`` into slot ``i`` of the record ``g`` (an index, or a slice or index array
    for several slots; the stream, position and score are the caller's)."""
    g.values[i], g.filled[i], g.dice[i] = st.values, st.filled, st.dice
    for k in SCALARS:
        getattr(g, k)[i] = getattr(st, k)


# ---------------------------------------------------------------------------- kernels
@kernel(inline=True)
def start_turn(i, g, ra, faces):
    """Roll 1 of game ``i``'s turn: the stream's next ``n`` dice (a pure roll)."""
    n = ra.P[rk.P_N]
    for a in range(n):
        faces[a] = g.stream[i, g.pos[i] + a]
    g.pos[i] += n
    g.dice_index[i] = rk.set_dice(faces, g.dice[i], ra.P, ra.key_to_index)
    g.roll[i] = 1
    g.pure[i] = 1


@kernel(inline=True)
def copy_slot(g, i, src, j):
    """Slot ``j`` of the record ``src`` into slot ``i`` of ``g`` (every :class:`Slots` field
    but the stream: a new game keeps the stream its caller drew)."""
    for c in range(g.values.shape[1]):  # loops: the kernels run without numba's runtime (no array views)
        g.filled[i, c] = src.filled[j, c]
        for r in range(g.values.shape[2]):
            g.values[i, c, r] = src.values[j, c, r]
    for b in range(g.dice.shape[1]):
        g.dice[i, b] = src.dice[j, b]
    g.dice_index[i] = src.dice_index[j]
    g.roll[i] = src.roll[j]
    g.announced[i] = src.announced[j]
    g.answer_due[i] = src.answer_due[j]
    g.turn[i] = src.turn[j]
    g.copy_row[i] = src.copy_row[j]
    g.jokers[i] = src.jokers[j]
    g.pure[i] = src.pure[j]
    g.score[i] = src.score[j]
    g.pos[i] = src.pos[j]


@kernel(inline=True)
def transition(i, a, g, ra, faces, parts, tmp, roll_next):
    """Apply game ``i``'s legal action ``a`` (RULES.md §3-4, §6); legality is the
    caller's (the legal mask of :func:`jamb_env.rules.kernels.legal_mask`).

    A re-roll keeps the sorted dice whose bit is set in ``a`` and draws the others from
    the stream; an announcement marks the cell; a joker changes a die, a basket rolls
    the turn's roll 1 again from the stream; a write credits its points (added to
    ``score``), passes on the next turn's obligations and ends the turn, and with
    ``roll_next`` rolls the next turn's roll 1 from the stream unless the sheet is full.

    ``faces`` int64 ``(n,)``, ``parts`` int64 ``(4,)``, ``tmp`` int64 ``(R,)``: scratch.
    Returns (points credited, the written cell or -1, whether the sheet is now full).
    """
    P = ra.P
    n = P[rk.P_N]
    pts = 0
    cell = -1
    if a < P[rk.P_NUM_HOLDS]:
        k = 0
        for b in range(n):
            if (a >> b) & 1:
                faces[k] = g.dice[i, b]
                k += 1
        for b in range(n - k):
            faces[k + b] = g.stream[i, g.pos[i] + b]
        g.pos[i] += n - k
        g.dice_index[i] = rk.set_dice(faces, g.dice[i], P, ra.key_to_index)
        g.roll[i] += 1
        g.pure[i] = 1 if a == 0 else 0
    elif a < P[rk.P_WRITE_OFFSET]:
        g.announced[i] = ra.ann_cells[a - P[rk.P_ANN_OFFSET]]
    elif a >= P[rk.P_JOKER_OFFSET]:  # Joly: a joker changes a die; a basket restarts the turn's rolls
        k = a - P[rk.P_JOKER_OFFSET]
        g.jokers[i] = rk.use_joker(k, g.dice[i], g.jokers[i], ra, faces)
        if rk.is_basket(k, P):
            start_turn(i, g, ra, faces)
        else:
            g.dice_index[i] = rk.set_dice(faces, g.dice[i], P, ra.key_to_index)
            g.pure[i] = 0
    else:
        cell = a - P[rk.P_WRITE_OFFSET]
        pts, due, copy_row = rk.write(g.values[i], g.filled[i], g.roll[i], g.dice_index[i], cell, ra, parts, tmp)
        g.answer_due[i] = due
        g.copy_row[i] = copy_row
        g.announced[i] = -1
        g.turn[i] += 1
        g.roll[i] = 0
        g.pure[i] = 0
        g.dice_index[i] = -1
        for b in range(n):
            g.dice[i, b] = 0
        if roll_next and g.turn[i] < P[rk.P_NUM_CELLS]:
            start_turn(i, g, ra, faces)
    g.score[i] += pts
    return pts, cell, g.turn[i] >= P[rk.P_NUM_CELLS]


@kernel(inline=True)
def _slot_of(values, filled, dice, scal, stream):
    """One game as a :class:`Slots` record built in compiled code (cheap to call from
    Python: flat arrays, no record to type-check): ``scal`` int64 ``(10,)`` holds the
    scalars of :data:`SCALARS`, then score and pos, as length-1 views."""
    return Slots(
        values,
        filled,
        dice,
        scal[0:1],
        scal[1:2],
        scal[2:3],
        scal[3:4],
        scal[4:5],
        scal[5:6],
        scal[6:7],
        scal[7:8],
        scal[8:9],
        stream,
        scal[9:10],
    )


@kernel
def _apply_one(a, values, filled, dice, scal, stream, ra, faces, parts, tmp):
    return transition(0, a, _slot_of(values, filled, dice, scal, stream), ra, faces, parts, tmp, False)[0]


@kernel
def _start_one(values, filled, dice, scal, stream, ra, faces):
    start_turn(0, _slot_of(values, filled, dice, scal, stream), ra, faces)


# ---------------------------------------------------------------------------- one game
def _one_slot(rules, st: GameState, dice, count: int) -> tuple[np.ndarray, ...]:
    """``st`` as the flat arrays of a one-slot record (:func:`_slot_of`) whose stream holds
    ``dice``: the ``count`` faces to be rolled. Checked even for trusting callers: the
    kernels read the stream unchecked."""
    stream = np.zeros((1, rules.dice), dtype=np.int8)
    if count:
        faces = _faces(dice)
        if faces is None or len(faces) != count or min(faces) < 1 or max(faces) > 6:
            raise ValueError(f"expected {count} integer die faces 1..6, got {np.asarray(dice).tolist()!r}")
        stream[0, :count] = faces
    scal = np.array([getattr(st, k) for k in SCALARS] + [0, 0], dtype=np.int64)  # then score, pos
    return (
        np.asarray(st.values).astype(np.int16)[None],
        np.asarray(st.filled).astype(np.int64)[None],
        np.asarray(st.dice).astype(np.int8)[None],
        scal,
        stream,
    )


def _faces(dice) -> list[int] | None:
    """``dice`` as a list of Python ints, or None if they are not integers (cheap for the
    few dice of a roll: no NumPy reductions)."""
    if isinstance(dice, np.ndarray):
        return dice.reshape(-1).tolist() if dice.dtype.kind in "iu" else None
    try:
        faces = list(dice)
    except TypeError:
        return None
    ok = all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in faces)
    return [int(x) for x in faces] if ok else None


def _state_of(values, filled, dice, scal) -> GameState:
    return GameState(values[0], filled[0], dice[0], *scal[:8].tolist())


def rolled_count(rules, action: int) -> int:
    """How many dice action ``action`` rolls from the stream: a re-roll ``n`` minus the
    kept ones, a basket all ``n``, any other action (announce, write, joker) none."""
    P, a = rules.arrays.P, int(action)
    if a < P[rk.P_NUM_HOLDS]:
        return rules.dice - a.bit_count()
    if rules.jokers and a >= P[rk.P_JOKER_OFFSET] and rk.is_basket(a - P[rk.P_JOKER_OFFSET], P):
        return rules.dice
    return 0


@cache
def _scratch(rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # one set per ruleset: the kernels hold the GIL, so no two calls use it at once
    return np.zeros(rules.dice, np.int64), np.zeros(4, np.int64), np.zeros(rules.num_rows, np.int64)


def apply(rules, st: GameState, action: int, dice=None) -> tuple[GameState, int]:
    """:func:`transition` on one game: ``st`` in one slot whose stream holds ``dice`` (the
    re-rolled faces, in the order they are rolled: :func:`rolled_count` of them), the new
    state and the points out. Legality is the caller's (:func:`jamb_env.rules.apply_action`
    checks it); a write leaves the next turn unrolled (``roll`` 0).

    Raises ValueError unless ``dice`` are :func:`rolled_count` integer faces 1..6."""
    values, filled, dice_, scal, stream = _one_slot(rules, st, dice, rolled_count(rules, action))
    faces, parts, tmp = _scratch(rules)
    points = _apply_one(int(action), values, filled, dice_, scal, stream, rules.arrays, faces, parts, tmp)
    return _state_of(values, filled, dice_, scal), int(points)


def roll_first(rules, st: GameState, dice) -> GameState:
    """:func:`start_turn` on one game: roll 1 of ``st``'s turn comes out as ``dice``."""
    values, filled, dice_, scal, stream = _one_slot(rules, st, dice, rules.dice)
    _start_one(values, filled, dice_, scal, stream, rules.arrays, _scratch(rules)[0])
    return _state_of(values, filled, dice_, scal)
