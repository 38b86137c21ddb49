"""The engine of every env: N games as one record of arrays, stepped by the one transition.

:class:`Engine` holds N games (``JambEnv``: N = 1; ``JambVecEnv``, the Gymnasium vector
env and the multiplayer envs: any N) as :data:`Games`: the state record of
:mod:`jamb_env.rules.transition` plus what the engine derives from it (legal masks,
sheet features, observations). A step is the rules' :func:`~jamb_env.rules.transition.transition`
then the legal mask (:func:`jamb_env.rules.kernels.legal_mask`) and the observation
(:mod:`jamb_env.engine.observation`): the single game, the batch and the core's
``apply_action`` run the same compiled code. A game's dice come from its stream: the
k-th die rolled is ``stream[i, k]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from jamb_env.engine.observation import encoder, observe, sheet_column, sheet_features, sheet_turn
from jamb_env.rules import GameState, Ruleset, action_to_string, roll_dice, why_illegal
from jamb_env.rules import kernels as rk
from jamb_env.rules._jit import kernel
from jamb_env.rules.game import SCORE_PARTS
from jamb_env.rules.transition import Slots, copy_slot, new_slots, read_state, start_turn, transition, write_state

#: Step the games on numba's threads from this many games on (both vector envs; no gain below).
PARALLEL_FROM = 256

#: The engine's record of N games: the state record's fields
#: (:class:`~jamb_env.rules.transition.Slots`) and what the engine derives from them after
#: every step: masks bool ``(N, A)``, sheet float32 ``(N, sheet size)`` (compact sheet
#: features), obs float32 ``(N, D)``.
Games = NamedTuple("Games", [(name, np.ndarray) for name in Slots._fields + ("masks", "sheet", "obs")])


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


class Engine:
    """N games of one ruleset and observation layout, as arrays (:data:`Games`): the
    engine every env holds (``JambEnv``: N = 1).

    :meth:`step` (every game) and :meth:`step_one` (one game) apply the one transition
    of :mod:`jamb_env.rules.transition` and derive masks and observations; :meth:`reset`
    and :meth:`new_games` start games from their dice streams; :meth:`game_state` and
    :meth:`load_state` convert a slot to and from a :class:`~jamb_env.rules.GameState`.
    The ruleset's and the observation's tables are shared read-only by every engine.
    """

    def __init__(self, rules: Ruleset, num_games: int, turn_features: bool = True):
        self.rules = rules
        self.encoder = encoder(rules, bool(turn_features))
        N, C, R, n = num_games, len(rules.columns), rules.num_rows, rules.dice
        A = int(rules.arrays.P[rk.P_NUM_ACTIONS])
        D = self.encoder.size
        self.num_games = N
        self.games = Games(
            **new_slots(rules, N),
            masks=np.zeros((N, A), dtype=np.bool_),
            sheet=np.zeros((N, self.encoder.sheet_size), dtype=np.float32),
            obs=np.zeros((N, D), dtype=np.float32),
        )
        self.results = Results(
            points=np.zeros(N, dtype=np.int64),
            dones=np.zeros(N, dtype=np.bool_),
            parts=np.zeros((N, 5), dtype=np.int64),
            cols=np.zeros((N, C + 1), dtype=np.int64),
        )
        self._none_held = np.zeros(N, dtype=np.bool_)
        self.empty = Slots(**new_slots(rules, 1, stream_len=1))  # what reset copies into a slot
        self.scratch = Scratch(
            np.zeros((N, C), np.int64),
            np.zeros((N, n), np.int64),
            np.zeros((N, 4), np.int64),
            np.zeros((N, R), np.int64),
        )

    def fresh_outputs(self) -> None:
        """New ``masks`` and ``obs`` arrays (every entry is written by the next step or
        reset): arrays handed out before are never written again."""
        g = self.games
        self.games = g._replace(masks=np.empty_like(g.masks), obs=np.empty_like(g.obs))

    def reset(self, idx: np.ndarray) -> None:
        """New games in slots ``idx`` (their streams already in ``games.stream``)."""
        idx = np.asarray(idx, dtype=np.int64)
        reset_games(idx, self.games, self.empty, self.rules.arrays, self.encoder.arrays, self.scratch)

    def new_games(self, idx: np.ndarray, rngs) -> None:
        """New games in slots ``idx``, each slot's dice stream drawn from its generator
        ``rngs[i]`` (:func:`jamb_env.rules.roll_dice`, as ``JambEnv.reset``)."""
        stream = self.games.stream
        for i in idx.tolist():
            stream[i] = roll_dice(rngs[i], stream.shape[1])
        self.reset(idx)

    def why_illegal(self, i: int, a: int) -> str:
        """Why action ``a`` is illegal in game ``i`` (for error messages)."""
        A = int(self.rules.arrays.P[rk.P_NUM_ACTIONS])
        if not 0 <= a < A:
            return f"action {a} is outside the action space 0..{A - 1}"
        reason = why_illegal(self.rules, self.game_state(i), a) or "not in the legal mask"
        return f"illegal action {a} ({action_to_string(self.rules, a)}): {reason}"

    def step(self, actions: np.ndarray, parallel: bool = False, held: np.ndarray | None = None) -> Results:
        """Apply one legal action per game (int64 ``(N,)``); returns :attr:`results`. The
        games ``held`` (bool ``(N,)``, True: an illegal action, a game that is over) are
        left as they are, their action not read and their results not written (see
        :meth:`step_except`)."""
        fn = step_parallel if parallel else step_serial
        held = self._none_held if held is None else held
        fn(actions, held, self.games, self.rules.arrays, self.encoder.arrays, self.results, self.scratch)
        return self.results

    def step_except(self, actions: np.ndarray, held: np.ndarray, parallel: bool = False) -> Results:
        """:meth:`step` into new output arrays (:meth:`fresh_outputs`), every game but the
        games ``held`` (int64 indices) playing its action: a held game is left as it was
        (its mask and observation rows recomputed from its unchanged state), with 0 points
        and not done in :attr:`results` (the door writes what its rules say)."""
        self.fresh_outputs()
        if not len(held):
            return self.step(actions, parallel)
        skip = np.zeros(self.num_games, dtype=np.bool_)
        skip[held] = True
        res = self.step(actions, parallel, skip)
        res.points[held], res.dones[held] = 0, False
        for i in held.tolist():
            self.refresh(i)
        return res

    def step_one(self, i: int, action: int) -> None:
        """Apply a legal ``action`` to game ``i`` only."""
        step_game(
            i, action, self.games, self.rules.arrays, self.encoder.arrays, self.results, *(s[i] for s in self.scratch)
        )

    def game_state(self, i: int) -> GameState:
        """Game ``i`` as a core :class:`~jamb_env.rules.GameState` (a copy)."""
        return read_state(self.games, i)

    def load_state(self, i: int, st: GameState, stream: np.ndarray, position: int, score: int) -> None:
        """Put ``st`` (its dice stream, position and score) into slot ``i`` and derive its
        sheet features, mask and observation (the caller has validated them)."""
        write_state(self.games, i, st)
        self.games.stream[i], self.games.pos[i], self.games.score[i] = stream, position, score
        self.refresh(i)

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
def game_mask(i, g, ra, bits):
    """Write game ``i``'s legal mask (:func:`~jamb_env.rules.kernels.legal_mask`) into ``g.masks[i]``."""
    rk.legal_mask(
        g.filled[i],
        g.dice_index[i],
        g.roll[i],
        g.announced[i],
        g.answer_due[i],
        g.copy_row[i],
        g.pure[i],
        g.turn[i],
        g.jokers[i],
        ra,
        bits,
        g.masks[i],
    )


@kernel(inline=True)
def refresh_game(i, g, ra, oa, bits, faces, parts, tmp):
    sheet_features(i, g.values, g.filled, g.answer_due, g.copy_row, g.turn, ra, oa, g.sheet, parts)
    game_mask(i, g, ra, bits)
    observe(i, g.dice_index, g.roll, g.announced, g.turn, g.jokers, g.pure, g.sheet, g.masks, ra, oa, g.obs)


@kernel
def step_state(i, a, g, ra, oa, res, bits, faces, parts, tmp):
    """Apply game ``i``'s legal action ``a``: the one :func:`~jamb_env.rules.transition.transition`
    (a write rolls the next turn's roll 1 unless the sheet is full), then the sheet
    features it changed and the legal mask (the observation is :func:`observe_game`'s);
    ``res`` gets the points, done and, for a finished game, its score parts."""
    pts, cell, done = transition(i, a, g, ra, faces, parts, tmp, True)
    res.points[i] = pts
    res.dones[i] = done
    if cell >= 0:  # only the written column's features and the turn's change
        sheet_column(i, cell // ra.P[rk.P_R], g.values, g.filled, ra, oa, g.sheet, parts)
        sheet_turn(i, g.answer_due, g.copy_row, g.turn, ra, oa, g.sheet)
    game_mask(i, g, ra, bits)
    if res.dones[i]:
        rk.sheet_parts(g.values[i], g.filled[i], ra, res.parts[i], res.cols[i], parts, tmp)


@kernel
def observe_game(i, g, ra, oa):
    """Game ``i``'s observation from its sheet features and mask."""
    observe(i, g.dice_index, g.roll, g.announced, g.turn, g.jokers, g.pure, g.sheet, g.masks, ra, oa, g.obs)


@kernel
def step_game(i, a, g, ra, oa, res, bits, faces, parts, tmp):
    """:func:`step_state` then :func:`observe_game` for game ``i``."""
    step_state(i, a, g, ra, oa, res, bits, faces, parts, tmp)
    observe_game(i, g, ra, oa)


def _make_step(parallel: bool):
    loop = prange if parallel else range

    def step(actions, held, g, ra, oa, res, s):
        # two passes over the games, each calling one compiled (not inlined) kernel per game:
        # the rules and masks, then the observations; the games held are left alone
        for i in loop(actions.shape[0]):
            if not held[i]:
                step_state(i, actions[i], g, ra, oa, res, s.bits[i], s.faces[i], s.parts[i], s.tmp[i])
        for i in loop(actions.shape[0]):
            if not held[i]:
                observe_game(i, g, ra, oa)

    step.__name__ = step.__qualname__ = "step_parallel" if parallel else "step_serial"
    return kernel(step, parallel=parallel)


#: Step every game: a serial loop, or over numba's threads (for many games).
step_serial = _make_step(False)
step_parallel = _make_step(True)


@kernel
def reset_games(idx, g, empty, ra, oa, s):
    """New games in the slots ``idx`` (streams already drawn): the state of ``empty``'s
    slot 0 (:func:`~jamb_env.rules.transition.new_state`), then roll 1."""
    for i in idx:
        copy_slot(g, i, empty, 0)
        start_turn(i, g, ra, s.faces[i])
        refresh_game(i, g, ra, oa, s.bits[i], s.faces[i], s.parts[i], s.tmp[i])
