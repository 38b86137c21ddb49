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
answer_due         R             one-hot row the answer column must take (only with an
                                 ``answer`` column; else size 0)
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
upper_to_bonus     C             points still missing to the bonus threshold /
                                 threshold ([0, 1])
upper_left         C             upper cells still empty / upper rows ([0, 1])
difference         C             credited difference / largest |difference| ([-1, 1])
progress           1             cells written / all cells ([0, 1])
=================  ============  =====================================================

``Jamb-v0`` is the same layout without ``target``, ``cell_reach`` and ``cell_hold``
(``turn_features=False``). Both come from per-ruleset tables indexed by (roll, dice
multiset): the hot path is a copy, not a loop over dice.

Source rules: RULES.md §1-2 (rows, columns, difference, bonus), §3 (rolls and holds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rules import GameState, Ruleset, layout, legal_mask, max_rolls, target_cells
from .rules.tables import UPPER_ROWS
from .rules.turn import cell_plans


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
        has_answer = lay.answer_column >= 0
        spec = [
            ("dice_onehot", n * 6, 0.0, 1.0),
            ("dice_counts", 6, 0.0, 1.0),
            ("roll", K, 0.0, 1.0),
            ("rolls_left", 1, 0.0, 1.0),
            ("announced", len(lay.announce_cells), 0.0, 1.0),
            ("answer_due", R if has_answer else 0, 0.0, 1.0),
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
        self.segments: dict[str, Segment] = {}
        start = 0
        for name, size, lo, hi in spec:
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
        # dice features per multiset: one-hot of the sorted faces, then counts / n
        dice_feat = np.zeros((M + 1, n * 6 + 6), dtype=np.float32)  # row M: no dice
        onehot = np.zeros((M, n, 6), dtype=np.float32)
        onehot[np.arange(M)[:, None], np.arange(n)[None, :], tables.sorted_dice.astype(np.int64) - 1] = 1.0
        dice_feat[:M, : n * 6] = onehot.reshape(M, -1)
        dice_feat[:M, n * 6 :] = tables.counts / n
        self._dice_feat = dice_feat
        row_max = np.tile(rules.row_max.astype(np.float32), C)
        self._row_max = row_max
        self._value_now = np.concatenate(
            [rules.cell_values.astype(np.float32) / row_max, np.zeros((K, 1, C * R), np.float32)], axis=1
        )  # (K, M + 1, C*R); index M = no dice
        self._upper = np.array([r for r, row in enumerate(rules.rows) if row in UPPER_ROWS], dtype=np.int64)
        self._upper_max = max(float(rules.row_max[self._upper].sum()), 1.0) if len(self._upper) else 1.0
        self._threshold = max(float(rules.bonus_threshold), 1.0)
        self._diff_max = 1.0
        self._diff_rows = None
        self._announce_slot = {int(cell): j for j, cell in enumerate(lay.announce_cells)}
        if all(x in rules.rows for x in ("ones", "max", "min")):
            self._diff_rows = tuple(rules.rows.index(x) for x in ("ones", "max", "min"))
            ones_max = float(rules.row_max[rules.rows.index("ones")])
            spread = float(rules.row_max[rules.rows.index("max")]) - 5.0  # min is >= 5 (five dice)
            self._diff_max = max(ones_max * spread, 1.0)
        self._turn_feat = self._turn_table() if turn_features else np.zeros((2, K + 1, M + 1, 0), np.float32)
        self._roll_eye = np.eye(K + 1, K, k=-1, dtype=np.float32)  # row 0: no roll
        self._sl = {name: seg.slice for name, seg in self.segments.items()}
        self._at = {name: seg.start for name, seg in self.segments.items()}
        self._bits = rules.row_bits

    def _turn_table(self) -> np.ndarray:
        """float32 ``(2, K + 1, M + 1, C*R + C*R*n)``: cell_reach then cell_hold of every
        cell, for a normal turn ([0]) and the last turn ([1], ``last_turn_rolls``), each
        roll (index 0: before the first roll) and multiset (index M: no dice), before the
        target mask is applied. A cell's plan ends at the last roll its column may be
        written on (``hand``: roll 1, ``free2``: roll 2; RULES.md §1)."""
        rules = self.rules
        n, K, M, CR = rules.dice, rules.max_rolls, rules.tables.num_multisets, rules.num_cells
        reach, hold = cell_plans(rules)
        table = np.zeros((2, K + 1, M + 1, CR + CR * n), dtype=np.float32)
        table[:, 1:, :M, :CR] = reach / self._row_max.astype(np.float64)
        bits = (hold[..., None] >> np.arange(n)) & 1  # (2, K, M, CR, n)
        table[:, 1:, :M, CR:] = np.where(hold[..., None] >= 0, bits, 0).reshape(2, K, M, CR * n)
        return table

    def targets(self, mask: np.ndarray) -> np.ndarray:
        """bool ``(C*R,)``: cells legal to write or to announce under action ``mask``."""
        return target_cells(self.rules, mask)

    def sheet_features(self, st: GameState) -> np.ndarray:
        """float32 ``(size,)`` with only the segments that change on a write filled in
        (answer_due, filled, written, per-column features, progress); the rest zero.
        The env computes it once per turn and passes it to :meth:`encode`."""
        rules, seg, sl, at = self.rules, self.segments, self._sl, self._at
        obs = np.zeros(self.size, dtype=np.float32)
        if st.answer_due >= 0 and seg["answer_due"].size:
            obs[at["answer_due"] + st.answer_due] = 1.0
        bits = self._bits[st.filled]  # (C, R) bool
        obs[sl["filled"]] = bits.ravel()
        obs[sl["written"]] = st.values.ravel() / self._row_max
        if len(self._upper):
            upper = st.values[:, self._upper].sum(axis=1).astype(np.float32)
            obs[sl["upper_sum"]] = upper / self._upper_max
            obs[sl["upper_to_bonus"]] = np.clip(self._threshold - upper, 0.0, self._threshold) / self._threshold
            obs[sl["upper_left"]] = 1.0 - bits[:, self._upper].mean(axis=1)
        if self._diff_rows is not None:
            ones, mx, mn = self._diff_rows
            v = st.values.astype(np.float32)
            credited = bits[:, ones] & bits[:, mx] & bits[:, mn]
            obs[sl["difference"]] = np.where(credited, v[:, ones] * (v[:, mx] - v[:, mn]), 0.0) / self._diff_max
        obs[at["progress"]] = st.turn / rules.num_cells
        return obs

    def sheet_after_write(self, sheet: np.ndarray, st: GameState, cell: int) -> np.ndarray:
        """:meth:`sheet_features` of ``st`` computed incrementally from ``sheet``, the
        features before ``cell`` was written (only that column's entries change)."""
        rules, at = self.rules, self._at
        R = rules.num_rows
        c, r = divmod(cell, R)
        out = sheet.copy()
        if self.segments["answer_due"].size:
            out[self._sl["answer_due"]] = 0.0
            if st.answer_due >= 0:
                out[at["answer_due"] + st.answer_due] = 1.0
        out[at["filled"] + cell] = 1.0
        out[at["written"] + cell] = np.float32(st.values[c, r]) / self._row_max[cell]
        f = int(st.filled[c])
        vals = st.values[c].tolist()
        if len(self._upper):
            upper = np.float32(sum(vals[q] for q in self._upper))
            thr = np.float32(self._threshold)
            out[at["upper_sum"] + c] = upper / np.float32(self._upper_max)
            out[at["upper_to_bonus"] + c] = min(max(thr - upper, np.float32(0.0)), thr) / thr
            out[at["upper_left"] + c] = 1.0 - sum(f >> q & 1 for q in self._upper) / len(self._upper)
        if self._diff_rows is not None:
            ones, mx, mn = self._diff_rows
            if f >> ones & 1 and f >> mx & 1 and f >> mn & 1:
                d = np.float32(vals[ones]) * (np.float32(vals[mx]) - np.float32(vals[mn]))
                out[at["difference"] + c] = d / np.float32(self._diff_max)
        out[at["progress"]] = st.turn / rules.num_cells
        return out

    def encode(self, st: GameState, sheet: np.ndarray | None = None, mask: np.ndarray | None = None) -> np.ndarray:
        """float32 ``(size,)`` observation of ``st``, inside ``[low, high]``.

        ``sheet``: :meth:`sheet_features` of ``st`` if the caller has it (it is only
        recomputed when a cell is written); ``mask``: ``legal_mask(rules, st)`` if the
        caller has it (used by the v1 turn features)."""
        rules = self.rules
        sl, at = self._sl, self._at
        obs = self.sheet_features(st) if sheet is None else sheet.copy()
        m = st.dice_index if st.dice_index >= 0 else rules.tables.num_multisets
        d = at["dice_onehot"]
        obs[d : d + self._dice_feat.shape[1]] = self._dice_feat[m]
        obs[sl["roll"]] = self._roll_eye[st.roll]
        if self.turn_features:
            if mask is None:
                mask = legal_mask(rules, st)
            on = self.targets(mask)
            n, CR = rules.dice, rules.num_cells
            tab = self._turn_feat[int(max_rolls(rules, st) != rules.rolls), st.roll, m]
            obs[sl["target"]] = on
            obs[sl["cell_reach"]] = np.where(on, tab[:CR], 0.0)
            obs[sl["cell_hold"]] = np.where(np.repeat(on, n), tab[CR:], 0.0)
        K = rules.max_rolls
        if st.roll and K > 1:
            obs[at["rolls_left"]] = (max_rolls(rules, st) - st.roll) / (K - 1)
        if st.announced >= 0:
            obs[at["announced"] + self._announce_slot[st.announced]] = 1.0
        if st.roll:
            filled = obs[sl["filled"]]
            obs[sl["value_now"]] = np.where(filled > 0, 0.0, self._value_now[st.roll - 1, m])
        return obs
