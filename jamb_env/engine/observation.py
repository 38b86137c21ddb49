"""The flat observation vector of ``Jamb-v1`` (and ``Jamb-v0``), its layout built from
the ruleset.

Segments, in order (``n`` dice, ``C`` played columns, ``R`` rows, ``A`` announce cells,
``K`` = max rolls per turn); all float32:

=================  ============  =====================================================
name               size          content (bounds)
=================  ============  =====================================================
dice_onehot        n * 6         sorted dice, one-hot face per position ([0, 1])
dice_counts        6             dice showing each face / n ([0, 1])
roll               K             one-hot roll number 1..K ([0, 1])
rolls_left         1             re-rolls left this turn / (K - 1) ([0, 1])
announced          A             one-hot announced cell ([0, 1]); zeros: none
jokers             8             (Joly's jokers only; else size 0) 1 per fixed joker
                                 1..6 left, free jokers left / 2, baskets left / 2
pure               1             (``announce_pure`` only; else size 0) 1 when the roll
                                 is pure (every die rolled)
answer_due         R             one-hot row the answer column must take (only with an
                                 ``answer`` column; else size 0)
copy_row           R             one-hot row the ``copy`` column offers this turn (only
                                 with a ``copy`` column; else size 0)
filled             C * R         1 where the cell is written ([0, 1])
written            C * R         written value / row maximum ([0, 1]); 0 where empty
value_now          C * R         value the cell would get if written now / row maximum,
                                 0 for written cells ([0, 1]); the mask says which
                                 cells are open
target             C * R         (v1 only) 1 where the cell may be written or announced
                                 now (the write and announce part of the action mask)
cell_reach         C * R         (v1 only) on target cells: expected points of the cell
                                 if the rest of this turn aims at it alone, / row
                                 maximum (min aims low); 0 elsewhere ([0, 1])
cell_hold          C * R * n     (v1 only) on target cells: that plan's keep-mask over
                                 the sorted dice (bit i: keep position i); 0 elsewhere
                                 and where the plan re-rolls no more ([0, 1]); the plan
                                 ends at the turn's last roll (``last_turn_rolls`` on
                                 the last turn) or the column's (hand: 1, free2: 2)
upper_sum          C             column's upper sum / largest possible upper sum
upper_to_bonus     C             points still missing to the bonus (the smallest
                                 upper sum that earns it, ``kernels.bonus_floor``) /
                                 that sum ([0, 1])
upper_left         C             upper cells still empty / upper rows ([0, 1])
difference         C             credited difference (``kernels.credited_difference``:
                                 ``difference_clamp`` included) / largest |difference|
                                 ([-1, 1])
progress           1             cells written / all cells ([0, 1])
=================  ============  =====================================================

``Jamb-v0`` is the same layout without ``target``, ``cell_reach`` and ``cell_hold``
(``turn_features=False``). Both come from per-ruleset tables indexed by (roll, dice
multiset): the hot path is a copy, not a loop over dice.

Source rules: RULES.md §1-2 (rows, columns, difference, bonus), §3 (rolls and holds).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from jamb_env.rules import GameState, Ruleset, layout, legal_mask
from jamb_env.rules import kernels as rk
from jamb_env.rules._jit import kernel
from jamb_env.rules.planner import cell_plans
from jamb_env.rules.transition import Slots, new_slots, transition, write_state


@dataclass(frozen=True)
class Segment:
    name: str
    start: int
    size: int
    low: float
    high: float

    @property
    def slice(self) -> slice:
        return slice(self.start, self.start + self.size)


# segment starts and sizes in ``ObsArrays.S``
(
    S_DICE,
    S_DICE_LEN,
    S_ROLL,
    S_ROLLS_LEFT,
    S_ANNOUNCED,
    S_ANSWER_DUE,
    S_ANSWER_LEN,
    S_FILLED,
    S_WRITTEN,
    S_VALUE_NOW,
    S_UPPER_SUM,
    S_UPPER_TO_BONUS,
    S_UPPER_LEFT,
    S_DIFFERENCE,
    S_PROGRESS,
    S_TURN,
    S_TURN_LEN,
    S_COPY_ROW,
    S_COPY_LEN,
    S_JOKERS,
    S_JOKERS_LEN,
    S_PURE,
    S_PURE_LEN,
) = range(23)
N_SEGMENTS = 23


class ObsArrays(NamedTuple):
    """The observation tables of a ruleset as the kernels read them (read-only, shared by
    every env of the ruleset): segment starts ``S``, row maxima per cell, upper rows,
    float constants (upper maximum, bonus threshold, difference maximum). The sheet
    features are kept compact: ``SS`` holds the segment starts inside them and ``blocks``
    the (observation start, length) of their two runs. Dice features
    per multiset, ``value_now`` and turn-feature tables, announce slot per cell."""

    S: np.ndarray
    SS: np.ndarray
    blocks: np.ndarray
    row_max_cells: np.ndarray
    upper_rows: np.ndarray
    fconst: np.ndarray
    dice_feat: np.ndarray
    value_now: np.ndarray
    turn_reach: np.ndarray
    turn_hold: np.ndarray
    ann_slot: np.ndarray


def _segment_spec(rules: Ruleset, turn_features: bool) -> list[tuple[str, int, float, float]]:
    """The observation's segments in order: (name, size, low, high) (module docstring)."""
    lay = layout(rules)
    n, C, R, K = rules.dice, len(rules.columns), rules.num_rows, rules.max_rolls
    has_answer = lay.answer_column >= 0
    has_copy = int(rules.arrays.P[rk.P_COPY_COL]) >= 0
    return [
        ("dice_onehot", n * 6, 0.0, 1.0),
        ("dice_counts", 6, 0.0, 1.0),
        ("roll", K, 0.0, 1.0),
        ("rolls_left", 1, 0.0, 1.0),
        ("announced", len(lay.announce_cells), 0.0, 1.0),
        ("jokers", 8 if rules.jokers else 0, 0.0, 1.0),
        ("pure", 1 if rules.announce_pure else 0, 0.0, 1.0),
        ("answer_due", R if has_answer else 0, 0.0, 1.0),
        ("copy_row", R if has_copy else 0, 0.0, 1.0),
        ("filled", C * R, 0.0, 1.0),
        ("written", C * R, 0.0, 1.0),
        ("value_now", C * R, 0.0, 1.0),
        ("target", C * R if turn_features else 0, 0.0, 1.0),
        ("cell_reach", C * R if turn_features else 0, 0.0, 1.0),
        ("cell_hold", C * R * n if turn_features else 0, 0.0, 1.0),
        ("upper_sum", C, 0.0, 1.0),
        ("upper_to_bonus", C, 0.0, 1.0),
        ("upper_left", C, 0.0, 1.0),
        ("difference", C, -1.0, 1.0),
        ("progress", 1, 0.0, 1.0),
    ]


def _normalisers(rules: Ruleset) -> np.ndarray:
    """float64 (3,): what the sheet's score features are divided by: the largest upper
    sum, the smallest upper sum that earns the bonus (``kernels.bonus_floor``) and the
    largest |difference| (each at least 1)."""
    upper = np.flatnonzero(rules.arrays.is_upper)
    upper_max = max(float(rules.row_max[upper].sum()), 1.0) if len(upper) else 1.0
    diff_max = 1.0
    diff_rows = rk.difference_rows(rules)
    if diff_rows is not None:
        ones_max = float(rules.row_max[diff_rows[0]])
        spread = float(rules.row_max[diff_rows[1]]) - 5.0  # min is >= 5 (five dice)
        diff_max = max(ones_max * spread, 1.0)
    return np.array([upper_max, max(float(rk.bonus_floor(rules.arrays.P)), 1.0), diff_max], dtype=np.float64)


def _dice_features(tables, n: int) -> np.ndarray:
    """float32 ``(M + 1, 6n + 6)``: per dice multiset the one-hot of the sorted faces, then
    the face counts / n; row ``M``: no dice (before a roll)."""
    M = tables.num_multisets
    # dice features per multiset: one-hot of the sorted faces, then counts / n
    dice_feat = np.zeros((M + 1, n * 6 + 6), dtype=np.float32)  # row M: no dice
    onehot = np.zeros((M, n, 6), dtype=np.float32)
    onehot[np.arange(M)[:, None], np.arange(n)[None, :], tables.sorted_dice.astype(np.int64) - 1] = 1.0
    dice_feat[:M, : n * 6] = onehot.reshape(M, -1)
    dice_feat[:M, n * 6 :] = tables.counts / n
    return dice_feat


def _segment_starts(seg: dict, size: int, dice_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The segment starts the kernels read: ``S`` in the observation, ``SS`` in the compact
    sheet features, and ``blocks``, the (observation start, length) of the sheet's two runs."""
    S = np.zeros(N_SEGMENTS, dtype=np.int64)
    S[S_DICE], S[S_DICE_LEN] = seg["dice_onehot"].start, dice_len
    S[S_ROLL], S[S_ROLLS_LEFT], S[S_ANNOUNCED] = seg["roll"].start, seg["rolls_left"].start, seg["announced"].start
    S[S_ANSWER_DUE], S[S_ANSWER_LEN] = seg["answer_due"].start, seg["answer_due"].size
    S[S_COPY_ROW], S[S_COPY_LEN] = seg["copy_row"].start, seg["copy_row"].size
    S[S_JOKERS], S[S_JOKERS_LEN] = seg["jokers"].start, seg["jokers"].size
    S[S_PURE], S[S_PURE_LEN] = seg["pure"].start, seg["pure"].size
    S[S_FILLED], S[S_WRITTEN], S[S_VALUE_NOW] = seg["filled"].start, seg["written"].start, seg["value_now"].start
    S[S_UPPER_SUM], S[S_UPPER_TO_BONUS], S[S_UPPER_LEFT] = (
        seg["upper_sum"].start,
        seg["upper_to_bonus"].start,
        seg["upper_left"].start,
    )
    S[S_DIFFERENCE], S[S_PROGRESS] = seg["difference"].start, seg["progress"].start
    S[S_TURN], S[S_TURN_LEN] = seg["target"].start, seg["target"].size + seg["cell_reach"].size + seg["cell_hold"].size
    # the sheet features: answer_due..written, then upper_sum..progress
    b1, b2 = seg["answer_due"].start, seg["upper_sum"].start
    blocks = np.array([[b1, seg["value_now"].start - b1], [b2, size - b2]], dtype=np.int64)
    SS = S.copy()
    for k in (S_ANSWER_DUE, S_COPY_ROW, S_FILLED, S_WRITTEN):
        SS[k] = S[k] - b1
    for k in (S_UPPER_SUM, S_UPPER_TO_BONUS, S_UPPER_LEFT, S_DIFFERENCE, S_PROGRESS):
        SS[k] = S[k] - b2 + blocks[0, 1]
    return S, SS, blocks


class ObservationEncoder:
    """Builds the observation of a :class:`GameState` by table look-ups.

    Args:
        rules: the ruleset.
        turn_features: include ``target``, ``cell_reach`` and ``cell_hold`` (``Jamb-v1``); False gives
            the ``Jamb-v0`` layout.

    Attributes:
        segments: dict name -> :class:`Segment` (start, size, bounds).
        size: total length; low / high: float32 bounds of the Box.
    """

    def __init__(self, rules: Ruleset, turn_features: bool = True):
        self.rules = rules
        self.turn_features = bool(turn_features)
        lay = layout(rules)
        n, C, R, K = rules.dice, len(rules.columns), rules.num_rows, rules.max_rolls
        self.segments: dict[str, Segment] = {}
        start = 0
        for name, size, lo, hi in _segment_spec(rules, self.turn_features):
            self.segments[name] = Segment(name, start, size, lo, hi)
            start += size
        self.size = start
        self.low = np.zeros(self.size, dtype=np.float32)
        self.high = np.zeros(self.size, dtype=np.float32)
        for seg in self.segments.values():
            self.low[seg.slice] = seg.low
            self.high[seg.slice] = seg.high

        tables = rules.tables
        M = tables.num_multisets
        dice_feat = _dice_features(tables, n)
        row_max = np.tile(rules.row_max.astype(np.float32), C)
        value_now = np.concatenate(
            [rules.cell_values.astype(np.float32) / row_max, np.zeros((K, 1, C * R), np.float32)], axis=1
        )  # (K, M + 1, C*R); index M = no dice
        upper = np.flatnonzero(rules.arrays.is_upper).astype(np.int64)
        if turn_features:
            turn_reach, turn_hold = self._turn_tables(row_max)
        else:
            turn_reach, turn_hold = np.zeros((2, K + 1, M + 1, 0), np.float32), np.zeros((2, K + 1, M + 1, 0), np.uint8)
        ann_slot = np.full(rules.num_cells, -1, dtype=np.int64)
        ann_slot[lay.announce_cells] = np.arange(len(lay.announce_cells))
        S, SS, blocks = _segment_starts(self.segments, self.size, dice_feat.shape[1])
        #: length of the compact sheet features
        self.sheet_size = int(blocks[:, 1].sum())
        #: the tables the observation kernels read (read-only)
        self.arrays = ObsArrays(
            S=S,
            SS=SS,
            blocks=blocks,
            row_max_cells=row_max,
            upper_rows=upper,
            fconst=_normalisers(rules),
            dice_feat=dice_feat,
            value_now=value_now,
            turn_reach=turn_reach,
            turn_hold=turn_hold,
            ann_slot=ann_slot,
        )
        for a in (*self.arrays, self.low, self.high):
            a.flags.writeable = False

    def _turn_tables(self, row_max: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``cell_reach`` float32 and ``cell_hold`` uint8, each ``(2, K + 1, M + 1, C*R)``,
        of every cell for a normal turn ([0]) and the last turn ([1], ``last_turn_rolls``),
        each roll (index 0: before the first roll) and multiset (index M: no dice), before
        the target mask is applied: the expected points / row maximum, and the plan's
        keep-mask as bits (bit i: keep sorted position i; 0 where no re-roll is planned).
        A cell's plan ends at the last roll its column may be written on (``hand``: roll
        1, ``free2``: roll 2; RULES.md §1). Compact (the hold as one byte, not n floats),
        so the tables stay in cache."""
        rules = self.rules
        K, M, CR = rules.max_rolls, rules.tables.num_multisets, rules.num_cells
        reach, hold = cell_plans(rules)
        reach_t = np.zeros((2, K + 1, M + 1, CR), dtype=np.float32)
        reach_t[:, 1:, :M] = reach / row_max.astype(np.float64)
        hold_t = np.zeros((2, K + 1, M + 1, CR), dtype=np.uint8)
        hold_t[:, 1:, :M] = np.where(hold >= 0, hold, 0)
        return reach_t, hold_t

    def sheet_features(self, st: GameState) -> np.ndarray:
        """float32 ``(sheet_size,)``: the segments that change on a write (answer_due,
        copy_row, filled, written, then upper_sum .. progress), compact (``arrays.SS``)."""
        out = np.zeros((1, self.sheet_size), dtype=np.float32)
        sheet_features(
            0,
            st.values[None],
            st.filled[None],
            np.array([st.answer_due]),
            np.array([st.copy_row]),
            np.array([st.turn]),
            self.rules.arrays,
            self.arrays,
            out,
            np.zeros(4, np.int64),
        )
        return out[0]

    def encode(self, st: GameState, sheet: np.ndarray | None = None, mask: np.ndarray | None = None) -> np.ndarray:
        """float32 ``(size,)`` observation of ``st``, inside ``[low, high]``.

        ``sheet``: :meth:`sheet_features` of ``st`` if the caller has it; ``mask``:
        ``legal_mask(rules, st)`` if the caller has it (the v1 turn features read it)."""
        sheet = self.sheet_features(st) if sheet is None else sheet
        mask = legal_mask(self.rules, st) if mask is None else mask
        out = np.zeros((1, self.size), dtype=np.float32)
        observe(
            0,
            np.array([st.dice_index]),
            np.array([st.roll]),
            np.array([st.announced]),
            np.array([st.turn]),
            np.array([st.jokers]),
            np.array([st.pure]),
            sheet[None],
            mask[None],
            self.rules.arrays,
            self.arrays,
            out,
        )
        return out[0]

    def afterstates(
        self, st: GameState, cells: np.ndarray, rolls: np.ndarray, dice_index: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The sheets after candidate writes from ``st``, for afterstate-value methods.

        Candidate ``i`` writes cell ``cells[i]`` with the dice multiset ``dice_index[i]``
        after roll ``rolls[i]`` (legality is the caller's: only cells it may write), through
        the engine's own write kernel, so the points and the sheet are exactly those of
        :func:`jamb_env.rules.apply_action` (RULES.md §2: bonus, difference and the
        obligations passed to the next turn included).

        Args:
            st: the state the writes start from (its dice are not read).
            cells, rolls, dice_index: int arrays ``(N,)``.

        Returns:
            (points int64 ``(N,)``, features float32 ``(N, sheet_size)``): the points each
            write credits and :meth:`sheet_features` of the sheet after it (the next turn's
            sheet before its first roll).
        """
        cells, rolls, dice_index = (np.ascontiguousarray(a, dtype=np.int64) for a in (cells, rolls, dice_index))
        N, rules = len(cells), self.rules
        g = Slots(**new_slots(rules, N, stream_len=0))  # a write rolls nothing: no stream
        write_state(g, slice(None), st)  # every slot: the state the writes start from
        g.roll[:], g.dice_index[:] = rolls, dice_index
        points = np.zeros(N, dtype=np.int64)
        out = np.zeros((N, self.sheet_size), dtype=np.float32)
        afterstate_kernel(
            g,
            cells + layout(rules).write_offset,
            rules.arrays,
            self.arrays,
            points,
            np.zeros(rules.dice, np.int64),
            np.zeros(4, np.int64),
            np.zeros(rules.num_rows, np.int64),
            out,
        )
        return points, out


@cache
def encoder(rules: Ruleset, turn_features: bool = True) -> ObservationEncoder:
    """The :class:`ObservationEncoder` of ``rules`` (one per ruleset and layout, shared
    by every env: its tables are read-only)."""
    return ObservationEncoder(rules, turn_features=turn_features)


# ---------------------------------------------------------------------------- kernels
@kernel(inline=True)
def sheet_column(i, c, values, filled, ra, oa, sheet, parts):
    """Column ``c``'s entries of game ``i``'s compact sheet features (``oa.SS``): filled,
    written, upper_sum, upper_to_bonus, upper_left, difference. The scores are the
    column's credited parts (:func:`~jamb_env.rules.kernels.column_parts`: upper sum and
    the credited difference) and the bonus's own floor; ``parts`` int64 ``(4,)``: scratch."""
    P = ra.P
    S = oa.SS
    R = P[rk.P_R]
    f = filled[i, c]
    for r in range(R):
        cell = c * R + r
        sheet[i, S[S_FILLED] + cell] = 1.0 if (f >> r) & 1 else 0.0
        sheet[i, S[S_WRITTEN] + cell] = np.float32(values[i, c, r]) / oa.row_max_cells[cell]
    rk.column_parts(values[i, c], f, ra, parts)
    n_upper = len(oa.upper_rows)
    if n_upper > 0:
        upper_max = np.float32(oa.fconst[0])
        threshold = np.float32(oa.fconst[1])
        up = parts[0]
        nfilled = 0
        for q in oa.upper_rows:
            if (f >> q) & 1:
                nfilled += 1
        sheet[i, S[S_UPPER_SUM] + c] = np.float32(up) / upper_max
        togo = np.float32(rk.bonus_floor(P) - up)  # the bonus's own threshold (bonus_strict: one more)
        if togo < 0:
            togo = np.float32(0.0)
        if togo > threshold:
            togo = threshold
        sheet[i, S[S_UPPER_TO_BONUS] + c] = togo / threshold
        sheet[i, S[S_UPPER_LEFT] + c] = np.float32(1.0 - nfilled / n_upper)
    if P[rk.P_ONES] >= 0:  # credited once ones, max and min are written (column_parts)
        sheet[i, S[S_DIFFERENCE] + c] = np.float32(parts[2]) / np.float32(oa.fconst[2])


@kernel(inline=True)
def sheet_turn(i, answer_due, copy_row, turn, ra, oa, sheet):
    """The entries of game ``i``'s sheet features that any write changes: the answer
    obligation, the copy column's row and the progress."""
    S = oa.SS
    for r in range(S[S_ANSWER_LEN]):
        sheet[i, S[S_ANSWER_DUE] + r] = 0.0
    if answer_due[i] >= 0 and S[S_ANSWER_LEN] > 0:
        sheet[i, S[S_ANSWER_DUE] + answer_due[i]] = 1.0
    for r in range(S[S_COPY_LEN]):
        sheet[i, S[S_COPY_ROW] + r] = 0.0
    if copy_row[i] >= 0 and S[S_COPY_LEN] > 0:
        sheet[i, S[S_COPY_ROW] + copy_row[i]] = 1.0
    sheet[i, S[S_PROGRESS]] = np.float32(turn[i] / ra.P[rk.P_NUM_CELLS])


@kernel(inline=True)
def sheet_features(i, values, filled, answer_due, copy_row, turn, ra, oa, sheet, parts):
    """The compact sheet features of game ``i`` into ``sheet[i]`` (``oa.SS``): answer_due,
    copy_row, filled, written, upper_sum, upper_to_bonus, upper_left, difference, progress."""
    for d in range(sheet.shape[1]):
        sheet[i, d] = 0.0
    for c in range(ra.P[rk.P_C]):
        sheet_column(i, c, values, filled, ra, oa, sheet, parts)
    sheet_turn(i, answer_due, copy_row, turn, ra, oa, sheet)


@kernel(inline=True)
def observe(i, dice_index, roll, announced, turn, jokers, pure, sheet, masks, ra, oa, obs):
    """The observation of game ``i`` into ``obs[i]`` from its sheet features
    ``sheet[i]`` and legal mask ``masks[i]``."""
    P = ra.P
    S = oa.S
    o = obs[i]
    sh = sheet[i]
    mask = masks[i]
    o[:] = 0.0
    at = 0
    for k in range(2):
        start = oa.blocks[k, 0]
        for d in range(oa.blocks[k, 1]):
            o[start + d] = sh[at + d]
        at += oa.blocks[k, 1]
    m = dice_index[i] if dice_index[i] >= 0 else P[rk.P_M]
    feat = oa.dice_feat[m]
    start = S[S_DICE]
    for d in range(S[S_DICE_LEN]):
        o[start + d] = feat[d]
    r = roll[i]
    if r > 0:
        o[S[S_ROLL] + r - 1] = 1.0
        kmax = P[rk.P_KMAX]
        if kmax > 1:
            o[S[S_ROLLS_LEFT]] = np.float32((rk.max_rolls(turn[i], P) - r) / (kmax - 1))
    if announced[i] >= 0:
        o[S[S_ANNOUNCED] + oa.ann_slot[announced[i]]] = 1.0
    if S[S_JOKERS_LEN] > 0:
        j = jokers[i]
        for v in range(6):
            o[S[S_JOKERS] + v] = np.float32(rk.fixed_joker_left(j, v + 1))
        o[S[S_JOKERS] + 6] = np.float32(rk.free_jokers_left(j) / 2)
        o[S[S_JOKERS] + 7] = np.float32(rk.baskets_left(j) / 2)
    if S[S_PURE_LEN] > 0:
        o[S[S_PURE]] = np.float32(pure[i])
    CR = P[rk.P_NUM_CELLS]
    if S[S_TURN_LEN] > 0:
        # v1 turn features on target cells (legal to write or to announce now)
        n = P[rk.P_N]
        s_t = S[S_TURN]
        last = 1 if rk.is_last_turn(turn[i], P) else 0
        reach = oa.turn_reach[last, r, m]
        hold = oa.turn_hold[last, r, m]
        w_off = P[rk.P_WRITE_OFFSET]
        a_off = P[rk.P_ANN_OFFSET]
        for cell in range(CR):
            on = mask[w_off + cell]
            slot = oa.ann_slot[cell]
            if not on and slot >= 0:
                on = mask[a_off + slot]
            if on:
                o[s_t + cell] = 1.0
                o[s_t + CR + cell] = reach[cell]
                at = s_t + 2 * CR + cell * n
                keep = hold[cell]
                for b in range(n):
                    o[at + b] = np.float32((keep >> b) & 1)
    if r > 0:
        now = oa.value_now[r - 1, m]
        s_filled = oa.SS[S_FILLED]
        s_now = S[S_VALUE_NOW]
        for cell in range(CR):
            o[s_now + cell] = 0.0 if sh[s_filled + cell] > 0 else now[cell]


@kernel
def afterstate_kernel(g, actions, ra, oa, points, faces, parts, tmp, out):
    """Candidate ``i``: the write ``actions[i]`` in slot ``i`` of ``g`` through the one
    :func:`~jamb_env.rules.transition.transition` (the next turn not rolled), its points
    into ``points[i]`` and the sheet features after it into ``out[i]``."""
    for i in range(len(actions)):
        points[i] = transition(i, actions[i], g, ra, faces, parts, tmp, False)[0]
        sheet_features(i, g.values, g.filled, g.answer_due, g.copy_row, g.turn, ra, oa, out, parts)
