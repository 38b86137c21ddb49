"""N games as arrays, stepped by the rule kernels: the engine of ``JambEnv`` (N = 1) and
``JambVecEnv`` (any N).

Both envs hold a :class:`Batch` and call the same kernels (:func:`step_game`,
:func:`reset_game`), which call the rules of :mod:`jamb_env.rules.kernels` and the
observation of :mod:`jamb_env.observation`: the single and the batched env cannot differ.
A game's dice come from its stream: the k-th die rolled is ``stream[i, k]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from .observation import encoder, observe, sheet_column, sheet_features, sheet_turn
from .rules import GameState, Ruleset, action_to_string, roll_dice, why_illegal
from .rules import kernels as rk
from .rules.game import SCORE_PARTS
from .rules._jit import kernel


class Games(NamedTuple):
    """The state of N games (each array's first axis is the game).

    values int16 (N, C, R) · filled int64 (N, C) row bitmasks · dice int8 (N, n) sorted ·
    dice_index int64 (N,) (-1 before a roll) · roll, announced, answer_due, turn, score,
    pos, copy_row, jokers, pure int64 (N,) · stream int8 (N, L) · masks bool (N, A) · sheet float32 (N, sheet size)
    (compact sheet features) · obs float32 (N, D).
    """

    values: np.ndarray
    filled: np.ndarray
    dice: np.ndarray
    dice_index: np.ndarray
    roll: np.ndarray
    announced: np.ndarray
    answer_due: np.ndarray
    turn: np.ndarray
    score: np.ndarray
    stream: np.ndarray
    pos: np.ndarray
    masks: np.ndarray
    sheet: np.ndarray
    obs: np.ndarray
    copy_row: np.ndarray
    jokers: np.ndarray
    pure: np.ndarray


class Results(NamedTuple):
    """What a step reports per game: points credited, done, and for a finished game its
    score parts (upper, bonus, difference, lower, bonus columns) and column totals."""

    points: np.ndarray
    dones: np.ndarray
    parts: np.ndarray
    cols: np.ndarray


class Scratch(NamedTuple):
    bits: np.ndarray
    faces: np.ndarray
    parts: np.ndarray
    tmp: np.ndarray


def stream_length(rules: Ruleset) -> int:
    """Dice a game can roll at most: every die of every roll of every turn, and with
    jokers every roll of the two turns a basket restarts."""
    baskets = 2 * rules.max_rolls if rules.jokers else 0
    return rules.dice * (rules.num_cells * rules.rolls + rules.last_turn_rolls - rules.rolls + baskets)


class Batch:
    """N games of one ruleset and observation layout, as arrays (:class:`Games`).

    The ruleset's and the observation's tables are shared read-only by every batch.
    """

    def __init__(self, rules: Ruleset, num_games: int, turn_features: bool = True):
        self.rules = rules
        self.encoder = encoder(rules, bool(turn_features))
        N, C, R, n = num_games, len(rules.columns), rules.num_rows, rules.dice
        A = int(rules.arrays.P[rk.P_NUM_ACTIONS])
        D = self.encoder.size
        self.num_games = N
        self.games = Games(
            values=np.zeros((N, C, R), dtype=np.int16),
            filled=np.zeros((N, C), dtype=np.int64),
            dice=np.zeros((N, n), dtype=np.int8),
            dice_index=np.full(N, -1, dtype=np.int64),
            roll=np.zeros(N, dtype=np.int64),
            announced=np.full(N, -1, dtype=np.int64),
            answer_due=np.full(N, -1, dtype=np.int64),
            turn=np.zeros(N, dtype=np.int64),
            score=np.zeros(N, dtype=np.int64),
            stream=np.zeros((N, stream_length(rules)), dtype=np.int8),
            pos=np.zeros(N, dtype=np.int64),
            masks=np.zeros((N, A), dtype=np.bool_),
            sheet=np.zeros((N, self.encoder.sheet_size), dtype=np.float32),
            obs=np.zeros((N, D), dtype=np.float32),
            copy_row=np.full(N, -1, dtype=np.int64),
            jokers=np.zeros(N, dtype=np.int64),
            pure=np.zeros(N, dtype=np.int64),
        )
        self.results = Results(
            points=np.zeros(N, dtype=np.int64),
            dones=np.zeros(N, dtype=np.bool_),
            parts=np.zeros((N, 5), dtype=np.int64),
            cols=np.zeros((N, C + 1), dtype=np.int64),
        )
        self.scratch = Scratch(
            np.zeros((N, C), np.int64), np.zeros((N, n), np.int64), np.zeros((N, 4), np.int64), np.zeros((N, R), np.int64)
        )

    def fresh_outputs(self) -> None:
        """New ``masks`` and ``obs`` arrays (every entry is written by the next step or
        reset): arrays handed out before are never written again."""
        g = self.games
        self.games = g._replace(masks=np.empty_like(g.masks), obs=np.empty_like(g.obs))

    def reset(self, idx: np.ndarray) -> None:
        """New games in slots ``idx`` (their streams already in ``games.stream``)."""
        reset_games(np.asarray(idx, dtype=np.int64), self.games, self.rules.arrays, self.encoder.arrays, self.scratch)

    def new_games(self, idx: np.ndarray, rngs) -> None:
        """New games in slots ``idx``, each slot's dice stream drawn from its generator
        ``rngs[i]`` (:func:`jamb_env.rules.roll_dice`, as ``JambEnv.reset``)."""
        stream = self.games.stream
        for i in idx.tolist():
            stream[i] = roll_dice(rngs[i], stream.shape[1])
        self.reset(idx)

    def snapshot(self, idx: np.ndarray) -> dict[str, np.ndarray]:
        """Copies of the games ``idx`` (every array), for :meth:`restore`."""
        return {k: v[idx].copy() for k, v in self.games._asdict().items()}

    def restore(self, idx: np.ndarray, saved: dict[str, np.ndarray]) -> None:
        """Put back the games ``idx`` saved by :meth:`snapshot`."""
        for k, v in saved.items():
            getattr(self.games, k)[idx] = v

    def why_illegal(self, i: int, a: int) -> str:
        """Why action ``a`` is illegal in game ``i`` (for error messages)."""
        A = int(self.rules.arrays.P[rk.P_NUM_ACTIONS])
        if not 0 <= a < A:
            return f"action {a} is outside the action space 0..{A - 1}"
        reason = why_illegal(self.rules, self.game_state(i), a) or "not in the legal mask"
        return f"illegal action {a} ({action_to_string(self.rules, a)}): {reason}"

    def step(self, actions: np.ndarray, parallel: bool = False) -> Results:
        """Apply one legal action per game (int64 ``(N,)``); returns :attr:`results`."""
        fn = step_parallel if parallel else step_serial
        fn(actions, self.games, self.rules.arrays, self.encoder.arrays, self.results, self.scratch)
        return self.results

    def step_one(self, i: int, action: int) -> None:
        """Apply a legal ``action`` to game ``i`` only."""
        step_game(i, action, self.games, self.rules.arrays, self.encoder.arrays, self.results, *(s[i] for s in self.scratch))

    def game_state(self, i: int) -> GameState:
        """Game ``i`` as a core :class:`~jamb_env.rules.GameState` (a copy)."""
        g = self.games
        return GameState(
            values=g.values[i].copy(), filled=g.filled[i].copy(), dice=g.dice[i].copy(),
            dice_index=int(g.dice_index[i]), roll=int(g.roll[i]), announced=int(g.announced[i]),
            answer_due=int(g.answer_due[i]), turn=int(g.turn[i]), copy_row=int(g.copy_row[i]), jokers=int(g.jokers[i]),
            pure=int(g.pure[i]),
        )

    def final_scores(self, idx) -> list[tuple[dict[str, int], dict[str, int]]]:
        """For each game of ``idx`` that the last step finished: its ``score_parts`` and
        ``column_scores`` dicts (the env's last info), from :attr:`results`."""
        cols = self.rules.columns + self.rules.derived_columns
        parts = self.results.parts[idx].tolist()
        totals = self.results.cols[idx, : len(cols)].tolist()
        return [(dict(zip(SCORE_PARTS, p)), dict(zip(cols, t))) for p, t in zip(parts, totals)]

    def refresh(self, i: int) -> None:
        """Recompute game ``i``'s sheet features, mask and observation from its state."""
        refresh_game(i, self.games, self.rules.arrays, self.encoder.arrays, *(s[i] for s in self.scratch))


# ---------------------------------------------------------------------------- kernels
@kernel(inline=True)
def start_turn(i, g, ra, faces):
    """Roll 1 of game ``i``'s next turn from its stream."""
    n = ra.P[rk.P_N]
    for a in range(n):
        faces[a] = g.stream[i, g.pos[i] + a]
    g.pos[i] += n
    g.dice_index[i] = rk.set_dice(faces, g.dice[i], ra.P, ra.key_to_index)
    g.roll[i] = 1
    g.pure[i] = 1


@kernel(inline=True)
def refresh_game(i, g, ra, oa, bits, faces, parts, tmp):
    sheet_features(i, g.values, g.filled, g.answer_due, g.copy_row, g.turn, ra, oa, g.sheet)
    rk.legal_mask(g.filled[i], g.dice_index[i], g.roll[i], g.announced[i], g.answer_due[i], g.copy_row[i], g.pure[i],
                  g.turn[i], g.jokers[i], ra, bits, g.masks[i])
    observe(i, g.dice_index, g.roll, g.announced, g.turn, g.jokers, g.pure, g.sheet, g.masks, ra, oa, g.obs)


@kernel
def play_game(i, a, g, ra, oa, res, bits, faces, parts, tmp):
    """Apply game ``i``'s legal action ``a`` (RULES.md §3-4): a re-roll draws the next
    dice of the stream, an announcement marks the cell, a write credits its points and
    starts the next turn (unless the sheet is full). Then the sheet features and the
    legal mask (the observation is :func:`observe_game`'s)."""
    P = ra.P
    n = P[rk.P_N]
    pts = 0
    res.dones[i] = False
    wrote = False
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
        pts, due, copy_row = rk.write(g.values[i], g.filled[i], g.roll[i], g.dice_index[i], a - P[rk.P_WRITE_OFFSET], ra,
                                      parts, tmp)
        g.answer_due[i] = due
        g.copy_row[i] = copy_row
        g.announced[i] = -1
        g.turn[i] += 1
        g.roll[i] = 0
        g.pure[i] = 0
        g.dice_index[i] = -1
        for b in range(n):
            g.dice[i, b] = 0
        wrote = True
        if g.turn[i] >= P[rk.P_NUM_CELLS]:
            res.dones[i] = True
        else:
            start_turn(i, g, ra, faces)
    g.score[i] += pts
    res.points[i] = pts
    if wrote:  # only the written column's features and the turn's change
        sheet_column(i, (a - P[rk.P_WRITE_OFFSET]) // P[rk.P_R], g.values, g.filled, ra, oa, g.sheet)
        sheet_turn(i, g.answer_due, g.copy_row, g.turn, ra, oa, g.sheet)
    rk.legal_mask(g.filled[i], g.dice_index[i], g.roll[i], g.announced[i], g.answer_due[i], g.copy_row[i], g.pure[i],
                  g.turn[i], g.jokers[i], ra, bits, g.masks[i])
    if res.dones[i]:
        rk.sheet_parts(g.values[i], g.filled[i], ra, res.parts[i], res.cols[i], parts, tmp)


@kernel
def observe_game(i, g, ra, oa):
    """Game ``i``'s observation from its sheet features and mask."""
    observe(i, g.dice_index, g.roll, g.announced, g.turn, g.jokers, g.pure, g.sheet, g.masks, ra, oa, g.obs)


@kernel
def step_game(i, a, g, ra, oa, res, bits, faces, parts, tmp):
    """:func:`play_game` then :func:`observe_game` for game ``i``."""
    play_game(i, a, g, ra, oa, res, bits, faces, parts, tmp)
    observe_game(i, g, ra, oa)


def _make_step(parallel: bool):
    loop = prange if parallel else range

    def step(actions, g, ra, oa, res, s):
        # two passes over the games, each calling one compiled (not inlined) kernel per game:
        # the rules and masks, then the observations
        for i in loop(actions.shape[0]):
            play_game(i, actions[i], g, ra, oa, res, s.bits[i], s.faces[i], s.parts[i], s.tmp[i])
        for i in loop(actions.shape[0]):
            observe_game(i, g, ra, oa)

    step.__name__ = step.__qualname__ = "step_parallel" if parallel else "step_serial"
    return kernel(step, parallel=parallel)


#: Step every game: a serial loop, or over numba's threads (for many games).
step_serial = _make_step(False)
step_parallel = _make_step(True)


@kernel
def reset_games(idx, g, ra, oa, s):
    """Empty sheets and roll 1 in the slots ``idx`` (streams already drawn)."""
    C = ra.P[rk.P_C]
    R = ra.P[rk.P_R]
    for i in idx:
        for c in range(C):
            g.filled[i, c] = 0
            for r in range(R):
                g.values[i, c, r] = 0
        g.announced[i] = -1
        g.answer_due[i] = -1
        g.copy_row[i] = -1
        g.jokers[i] = rk.JOKERS_FULL if ra.P[rk.P_JOKERS] else 0
        g.turn[i] = 0
        g.score[i] = 0
        g.pos[i] = 0
        start_turn(i, g, ra, s.faces[i])
        refresh_game(i, g, ra, oa, s.bits[i], s.faces[i], s.parts[i], s.tmp[i])
