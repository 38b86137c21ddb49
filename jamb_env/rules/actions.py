"""The action space of a ruleset (RULES.md §1-4, §6): its layout, and an action's index
to and from its meaning (:func:`decode`, :func:`encode`, :func:`action_to_string`).

Action encoding (flat, used by the env and every agent), with ``n`` dice, ``C`` played
columns and ``R`` rows:

* ``0 .. 2**n - 1``: re-roll, keeping the sorted dice whose bit is set in the index
  (bit ``i`` = sorted position ``i``). Only the canonical (leftmost) mask of each
  distinct hold is legal, and keep-all is never legal.
* ``2**n .. 2**n + A - 1``: announce cell ``announce_cells[j]`` (the ``A`` cells of the
  announce columns).
* ``2**n + A .. 2**n + A + C*R - 1``: write cell ``c * R + r``.
* with Joly's jokers only (RULES.md §6), ``J = 2**n + A + C*R`` onwards: ``J + (v - 1) * n
  + i`` the fixed joker valued ``v`` on the die at sorted position ``i``; ``J + 6 * n +
  (v - 1) * n + i`` a free joker ``J`` set to ``v`` on die ``i``; ``J + 12 * n`` a basket
  (the turn restarts at roll 1 with all dice rolled). Rulesets without jokers have none
  of these, so their layouts are unchanged.

:mod:`jamb_env.rules.game` re-exports every name; what is legal in a state is its
:func:`~jamb_env.rules.game.legal_mask`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from jamb_env.rules import kernels as K
from jamb_env.rules.ruleset import Ruleset

__all__ = ["Action", "Layout", "action_to_string", "decode", "encode", "layout", "target_cells"]


class Action(NamedTuple):
    """A decoded action.

    ``kind`` is "reroll", "announce", "write", "joker" or "basket"; ``keep`` (reroll
    only) is a tuple of bools over the sorted dice; ``column`` and ``row`` (announce,
    write) are ids; ``joker`` ("1".."6" for a fixed joker, "J" for a free one), ``die``
    (sorted position 0..n-1) and ``value`` (1..6) describe a joker use.
    """

    kind: str
    keep: tuple[bool, ...] | None = None
    column: str | None = None
    row: str | None = None
    joker: str | None = None
    die: int | None = None
    value: int | None = None


@dataclass(frozen=True)
class Layout:
    """Action layout of a ruleset (cached per ruleset; read from ``rules.arrays``)."""

    num_holds: int
    announce_cells: np.ndarray  # int64 (A,)
    num_actions: int
    announce_offset: int
    write_offset: int
    joker_offset: int  # first joker action (= num_actions without jokers)
    announce_columns: tuple[int, ...]
    answer_column: int
    has_maximal: bool
    basket: int  # the basket action (Joly, RULES.md §6; kernels.joker_index), -1 without jokers

    @property
    def writes(self) -> slice:
        """The write actions' slice of a mask (``C*R`` entries; cell ``c * R + r``)."""
        return slice(self.write_offset, self.joker_offset)

    def is_write(self, action) -> bool:
        """``action`` writes a cell (and so ends the turn)."""
        return self.write_offset <= int(action) < self.joker_offset


@cache
def layout(rules: Ruleset) -> Layout:
    """The :class:`Layout` (action offsets, announce and answer columns) of ``rules``."""
    ra = rules.arrays
    P = ra.P
    return Layout(
        num_holds=int(P[K.P_NUM_HOLDS]),
        announce_cells=ra.ann_cells,
        num_actions=int(P[K.P_NUM_ACTIONS]),
        announce_offset=int(P[K.P_ANN_OFFSET]),
        write_offset=int(P[K.P_WRITE_OFFSET]),
        joker_offset=int(P[K.P_JOKER_OFFSET]),
        announce_columns=tuple(ra.ann_cols.tolist()),
        answer_column=int(P[K.P_ANSWER_COL]),
        has_maximal=bool(P[K.P_HAS_MAXIMAL]),
        basket=int(P[K.P_JOKER_OFFSET]) + int(K.joker_index(K.JOKER_BASKET, 0, 0, rules.dice)) if rules.jokers else -1,
    )


def target_cells(rules: Ruleset, mask: np.ndarray) -> np.ndarray:
    """bool ``(C*R,)``: the cells legal to write or to announce under action ``mask``
    (the open cells a turn can still aim at)."""
    lay = layout(rules)
    out = mask[lay.writes].copy()
    out[lay.announce_cells] |= mask[lay.announce_offset : lay.write_offset]
    return out


def decode(rules: Ruleset, action: int) -> Action:
    """The :class:`Action` of index ``action``; ValueError outside the action space."""
    lay = layout(rules)
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"an action is an integer in 0..{lay.num_actions - 1}, got {action!r}")
    a = int(action)
    if not 0 <= a < lay.num_actions:
        raise ValueError(f"action {a} is outside the action space 0..{lay.num_actions - 1}")
    if a < lay.num_holds:
        return Action("reroll", keep=tuple(bool(a >> i & 1) for i in range(rules.dice)))
    if a < lay.write_offset:
        column, row = rules.cell_name(int(lay.announce_cells[a - lay.announce_offset]))
        return Action("announce", column=column, row=row)
    if a < lay.joker_offset:
        column, row = rules.cell_name(a - lay.write_offset)
        return Action("write", column=column, row=row)
    kind, value, die = K.joker_action(a - lay.joker_offset, rules.dice)
    if kind == K.JOKER_BASKET:
        return Action("basket")
    return Action("joker", joker="J" if kind == K.JOKER_FREE else str(value), die=int(die), value=int(value))


def encode(rules: Ruleset, action: Action) -> int:
    """The index of ``action``; ValueError if it names no action of this ruleset."""
    lay = layout(rules)
    if not isinstance(action, Action):
        raise ValueError(f"expected an Action, got {action!r}")
    if action.kind == "reroll":
        keep = action.keep
        if (
            not isinstance(keep, (tuple, list))
            or len(keep) != rules.dice
            or not all(isinstance(k, (bool, np.bool_)) for k in keep)
        ):
            raise ValueError(f"a reroll needs keep: {rules.dice} bools over the sorted dice, got {keep!r}")
        return sum(1 << i for i, k in enumerate(action.keep) if k)
    if action.kind in ("joker", "basket"):
        if not rules.jokers:
            raise ValueError(f"{rules.name} has no jokers (RULES.md §6)")
        if action.kind == "basket":
            return lay.basket
        die, value = action.die, action.value
        if action.joker not in ("1", "2", "3", "4", "5", "6", "J"):
            raise ValueError(f"joker must be '1'..'6' (fixed) or 'J' (free), got {action.joker!r}")
        if action.joker != "J":
            value = int(action.joker) if value is None else value
            if value != int(action.joker):
                raise ValueError(f"the fixed joker {action.joker} has value {action.joker}, not {value!r}")
        if isinstance(die, bool) or not isinstance(die, (int, np.integer)) or not 0 <= die < rules.dice:
            raise ValueError(f"die is a sorted dice position 0..{rules.dice - 1}, got {die!r}")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= 6:
            raise ValueError(f"a joker's value is a face 1..6, got {value!r}")
        kind = K.JOKER_FREE if action.joker == "J" else K.JOKER_FIXED
        return lay.joker_offset + int(K.joker_index(kind, int(value), int(die), rules.dice))
    if action.kind in ("announce", "write"):
        cell = rules.cell(action.column, action.row)
        if action.kind == "write":
            return lay.write_offset + cell
        hits = np.flatnonzero(lay.announce_cells == cell)
        if not len(hits):
            raise ValueError(f"column {action.column!r} is not an announce column")
        return lay.announce_offset + int(hits[0])
    raise ValueError(f"unknown action kind {action.kind!r}; kinds are reroll, announce, write, joker, basket")


def action_to_string(rules: Ruleset, action: int) -> str:
    """Readable form: ``reroll keep [1 0 1 0 0]``, ``announce announce/full``, ``write down/ones``."""
    act = decode(rules, action)
    if act.kind == "reroll":
        return "reroll keep [" + " ".join("1" if k else "0" for k in act.keep) + "]"
    if act.kind == "basket":
        return "basket"
    if act.kind == "joker":
        name = f"J={act.value}" if act.joker == "J" else act.joker
        return f"joker {name} on die {act.die + 1}"
    return f"{act.kind} {act.column}/{act.row}"
