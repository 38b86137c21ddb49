"""Dice tables shared by the env, the batched env and the solvers.

Everything here is computed once per dice count (and once per ruleset for the row
values) and then used by table look-up only:

* the multisets of ``n`` dice (252 for 5 dice, 462 for 6), as sorted faces and as
  face counts, with an index from face counts to multiset;
* the holds: for every multiset and every keep-mask over its sorted positions, the
  kept sub-multiset and whether the mask is the canonical one for that hold;
* the hold transitions: for every kept sub-multiset, the probability of each
  resulting multiset after rolling the other dice;
* the value of every row for every multiset (``row_values``).

No Gymnasium or torch import here (RULES.md §1-3 only).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from jamb_env.rules.params import face_weight

FACES = 6

#: Row ids in their canonical order (RULES.md §1).
UPPER_ROWS = ("ones", "twos", "threes", "fours", "fives", "sixes")
ROW_IDS = UPPER_ROWS + (
    "max",
    "min",
    "trilling",
    "straight",
    "full",
    "poker",
    "jamb",
    "three_by_two",
    "jamb6",
)
#: Rows that need six dice.
SIX_DICE_ROWS = ("three_by_two", "jamb6")


@cache
def _weights(n: int) -> tuple[int, ...]:
    """Each face's share of a multiset key, by face (index 0 unused, 0):
    :func:`jamb_env.rules.params.face_weight`."""
    return (0,) + tuple(int(face_weight(face, n)) for face in range(1, FACES + 1))


def _counts_key(counts: np.ndarray, n: int) -> np.ndarray:
    """The multiset keys of face-count vectors ``(..., 6)`` (their dice's face weights summed)."""
    return (np.asarray(counts, dtype=np.int64) * np.array(_weights(n)[1:], dtype=np.int64)).sum(axis=-1)


@dataclass(frozen=True, eq=False)
class DiceTables:
    """Multisets, holds and hold transitions for ``n`` dice (5 or 6).

    Attributes:
        n: number of dice.
        sorted_dice: int8 ``(M, n)``, the faces of multiset ``m`` in ascending order.
        counts: int8 ``(M, 6)``, how many dice show each face 1..6.
        key_to_index: int32 ``((n+1)**6,)``, multiset index from ``_counts_key``; -1 where
            the counts do not sum to ``n``.
        sub_counts: int8 ``(S, 6)``, every sub-multiset of 0..n dice (the kept dice of a
            hold); ``sub_size`` int8 ``(S,)`` its size.
        hold_sub: int32 ``(M, 2**n)``, the kept sub-multiset of keep-mask ``k`` (bit ``i``
            set: keep sorted position ``i``).
        hold_canonical: bool ``(M, 2**n)``, True where ``k`` is the leftmost mask for its
            kept sub-multiset and keeps fewer than ``n`` dice (so each distinct re-roll
            appears once, and keep-all is never a re-roll).
        transition: float64 ``(S, M)``, probability of ending in multiset ``m`` after
            keeping sub-multiset ``s`` and rolling the other ``n - size(s)`` dice.
    """

    n: int
    sorted_dice: np.ndarray
    counts: np.ndarray
    key_to_index: np.ndarray
    sub_counts: np.ndarray
    sub_size: np.ndarray
    hold_sub: np.ndarray
    hold_canonical: np.ndarray
    transition: np.ndarray

    @property
    def num_multisets(self) -> int:
        return len(self.sorted_dice)

    def index(self, dice) -> int:
        """Multiset index of ``dice`` (any order, faces 1..6, exactly ``n`` dice)."""
        weights = _weights(self.n)
        faces = dice.tolist() if isinstance(dice, np.ndarray) else dice
        return int(self.key_to_index[sum(weights[int(f)] for f in faces)])

    def sub_index(self, dice) -> int:
        """Sub-multiset index of ``dice`` (0..n dice, any order)."""
        counts = np.bincount(np.asarray(dice, dtype=np.int64) - 1, minlength=FACES)
        return int(self._sub_lookup[_counts_key(counts, self.n)])

    @property
    def _sub_lookup(self) -> np.ndarray:
        return _sub_lookup(self.n)


@cache
def _sub_lookup(n: int) -> np.ndarray:
    tables = dice_tables(n)
    lookup = np.full((n + 1) ** FACES, -1, dtype=np.int32)
    lookup[_counts_key(tables.sub_counts, n)] = np.arange(len(tables.sub_counts))
    return lookup


@cache
def dice_tables(n: int) -> DiceTables:
    """Build (once, cached) the :class:`DiceTables` for ``n`` dice."""
    multisets = list(itertools.combinations_with_replacement(range(1, FACES + 1), n))
    sorted_dice = np.array(multisets, dtype=np.int8)
    counts = np.zeros((len(multisets), FACES), dtype=np.int8)
    for i, ms in enumerate(multisets):
        for f in ms:
            counts[i, f - 1] += 1
    key_to_index = np.full((n + 1) ** FACES, -1, dtype=np.int32)
    key_to_index[_counts_key(counts, n)] = np.arange(len(multisets))

    subs = [sub for size in range(n + 1) for sub in itertools.combinations_with_replacement(range(1, FACES + 1), size)]
    sub_counts = np.zeros((len(subs), FACES), dtype=np.int8)
    for i, sub in enumerate(subs):
        for f in sub:
            sub_counts[i, f - 1] += 1
    sub_size = sub_counts.sum(axis=1).astype(np.int8)
    sub_lookup = np.full((n + 1) ** FACES, -1, dtype=np.int32)
    sub_lookup[_counts_key(sub_counts, n)] = np.arange(len(subs))

    n_masks = 1 << n
    hold_sub = np.zeros((len(multisets), n_masks), dtype=np.int32)
    hold_canonical = np.zeros((len(multisets), n_masks), dtype=bool)
    for m, ms in enumerate(multisets):
        seen: set[int] = set()
        for mask in range(n_masks):
            kept = [ms[i] for i in range(n) if mask >> i & 1]
            kc = np.bincount(np.array(kept, dtype=np.int64) - 1, minlength=FACES)
            s = int(sub_lookup[_counts_key(kc, n)])
            hold_sub[m, mask] = s
            # The leftmost subset keeps, for each face, its first copies: with masks
            # enumerated in increasing order that is not the first one seen, so test it.
            canonical = True
            for face in range(1, FACES + 1):
                positions = [i for i in range(n) if ms[i] == face]
                k = sum(1 for i in positions if mask >> i & 1)
                if any(not (mask >> i & 1) for i in positions[:k]):
                    canonical = False
                    break
            if canonical and len(kept) < n:
                assert s not in seen
                seen.add(s)
                hold_canonical[m, mask] = True

    transition = np.zeros((len(subs), len(multisets)), dtype=np.float64)
    for s in range(len(subs)):
        free = n - int(sub_size[s])
        # Each ordered outcome of the free dice has probability 6**-free; group by counts.
        for outcome in itertools.combinations_with_replacement(range(FACES), free):
            oc = np.bincount(np.array(outcome, dtype=np.int64), minlength=FACES)
            ways = math.factorial(free)
            for c in oc:
                ways //= math.factorial(int(c))
            m = int(key_to_index[_counts_key(sub_counts[s] + oc, n)])
            transition[s, m] += ways / FACES**free
    return DiceTables(
        n=n,
        sorted_dice=sorted_dice,
        counts=counts,
        key_to_index=key_to_index,
        sub_counts=sub_counts,
        sub_size=sub_size,
        hold_sub=hold_sub,
        hold_canonical=hold_canonical,
        transition=transition,
    )


@dataclass(frozen=True)
class RowScoring:
    """The scoring parameters that row values depend on (RULES.md §1, §3, §5)."""

    upper_dice: int = 5
    trilling_bonus: int = 10
    full_bonus: int = 30
    poker_bonus: int = 40
    jamb_bonus: int = 50
    three_by_two_bonus: int = 20
    jamb6_bonus: int = 60
    full_allows_five_of_a_kind: bool = False
    #: straight values after roll 1, 2, 3 (rolls 4-5 like roll 3).
    straight_small: tuple[int, int, int] = (35, 35, 35)
    straight_large: tuple[int, int, int] = (45, 45, 45)


def row_value(row: str, counts, straight_roll: int, scoring: RowScoring) -> int:
    """The value of ``row`` for dice with face ``counts`` (length 6).

    ``straight_roll`` is the roll index 0..2 whose straight value applies. This is the
    reference implementation the tables are built from (RULES.md §1, §3).
    """
    counts = [int(c) for c in counts]
    n = sum(counts)
    faces = [f for f in range(1, 7) for _ in range(counts[f - 1])]  # ascending
    if row in UPPER_ROWS:
        face = UPPER_ROWS.index(row) + 1
        return face * min(counts[face - 1], scoring.upper_dice)
    if row == "max":
        return sum(faces[-5:])
    if row == "min":
        return sum(faces[:5])
    of_a_kind = {
        "trilling": (3, scoring.trilling_bonus),
        "poker": (4, scoring.poker_bonus),
        "jamb": (5, scoring.jamb_bonus),
        "jamb6": (6, scoring.jamb6_bonus),
    }
    if row in of_a_kind:  # exactly k dice of the highest face shown at least k times
        k, bonus = of_a_kind[row]
        best = [f for f in range(6, 0, -1) if counts[f - 1] >= k]
        return k * best[0] + bonus if best else 0
    if row == "straight":
        if all(counts[f - 1] for f in range(2, 7)):
            return scoring.straight_large[straight_roll]
        if all(counts[f - 1] for f in range(1, 6)):
            return scoring.straight_small[straight_roll]
        return 0
    if row == "full":
        best = 0
        for a in range(1, 7):
            if counts[a - 1] >= 3:
                for b in range(1, 7):
                    if b != a and counts[b - 1] >= 2:
                        best = max(best, 3 * a + 2 * b + scoring.full_bonus)
                if counts[a - 1] >= 5 and scoring.full_allows_five_of_a_kind:
                    best = max(best, 5 * a + scoring.full_bonus)
        return best
    if row == "three_by_two":
        if n != 6:
            return 0
        nonzero = sorted(c for c in counts if c)
        if all(c % 2 == 0 for c in nonzero) or nonzero == [3, 3]:
            return sum(faces) + scoring.three_by_two_bonus
        return 0
    raise ValueError(f"unknown row {row!r}; rows are {', '.join(ROW_IDS)}")


def row_values(n: int, rows: tuple[str, ...], scoring: RowScoring, straight_roll: int) -> np.ndarray:
    """int16 ``(M, len(rows))``: the value of each row for each ``n``-dice multiset."""
    tables = dice_tables(n)
    out = np.zeros((tables.num_multisets, len(rows)), dtype=np.int16)
    for m, counts in enumerate(tables.counts):
        for r, row in enumerate(rows):
            out[m, r] = row_value(row, counts, straight_roll, scoring)
    return out
