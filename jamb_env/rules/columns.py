"""The column kinds of RULES.md §1 as data: :data:`COLUMN_KINDS`, one :class:`ColumnKind`
entry each (how its cells open, its fronts, the rolls a write is allowed after, whether a
0 in it zeroes ``maximal``, what a ruleset needs for it).

:func:`jamb_env.rules.kernels.writable` reads the entries (through ``RuleArrays``) and has
the one branch of each ``OPEN_*`` rule; :mod:`jamb_env.rules.kernels` re-exports every name.
To add a column kind: one entry here (reusing an ``OPEN_*`` rule), or, for a new way of
opening cells, an ``OPEN_*`` code with its branch in ``writable`` (docs/presets.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "ANY_ROLL",
    "COLUMN_KINDS",
    "ColumnKind",
    "OPEN_AFTER_ROW",
    "OPEN_ANNOUNCED",
    "OPEN_ANSWER",
    "OPEN_ANY",
    "OPEN_COPY",
    "OPEN_FRONT",
    "OPEN_LAST",
    "OPEN_NONE",
    "column_fronts",
    "front_masks",
]

#: How a column's cells open (the branches of :func:`writable`).
OPEN_FRONT = 0  # the first empty cell along each of the kind's fronts
OPEN_ANY = 1  # any empty cell
OPEN_ANNOUNCED = 2  # only the cell announced right after roll 1
OPEN_ANSWER = 3  # the row of the previous announcement; any once the announce columns are full
OPEN_LAST = 4  # any empty cell once every other column (but after_row) is full
OPEN_AFTER_ROW = 5  # a row once it is written in every other column (but mandatory)
OPEN_NONE = 6  # derived columns: never written
OPEN_COPY = 7  # the row the previous player just wrote; any once the other columns are full

#: No roll limit for writing.
ANY_ROLL = 99


def _fronts_down(rows: Sequence[str]) -> list[list[int]]:
    return [list(range(len(rows)))]


def _fronts_up(rows: Sequence[str]) -> list[list[int]]:
    return [list(range(len(rows) - 1, -1, -1))]


def _fronts_updown(rows: Sequence[str]) -> list[list[int]]:
    return _fronts_down(rows) + _fronts_up(rows)


def _fronts_oddeven(rows: Sequence[str]) -> list[list[int]]:
    # the 1st, 3rd, ... rows from the top; the 2nd, 4th, ... rows from the bottom
    return [list(range(0, len(rows), 2)), list(range(1, len(rows), 2))[::-1]]


def _fronts_middle(rows: Sequence[str]) -> list[list[int]]:
    return [list(range(rows.index("max"), -1, -1)), list(range(rows.index("min"), len(rows)))]


def _needs_max_min(rows: Sequence[str], columns: Sequence[str]) -> str | None:
    if "max" not in rows or "min" not in rows or rows.index("min") != rows.index("max") + 1:
        return "'middle' needs rows 'max' and 'min', with min right after max"
    return None


def _needs_announce(rows: Sequence[str], columns: Sequence[str]) -> str | None:
    return None if "announce" in columns else "'answer' needs an 'announce' column (RULES.md §5)"


def _needs_played(rows: Sequence[str], columns: Sequence[str]) -> str | None:
    if not [c for c in columns if c not in ("mandatory", "after_row", "maximal")]:
        return "'maximal' needs at least one played column"
    return None


@dataclass(frozen=True)
class ColumnKind:
    """One column kind of RULES.md §1, as data.

    Attributes:
        name: the kind's id in ruleset files.
        opens: how its cells open (``OPEN_*``; see :func:`writable`).
        fronts: for ``OPEN_FRONT``: rows -> the row sequences whose first empty cell is open.
        last_write_roll: the last roll of a turn after which it may be written.
        first_write_roll: the first roll of a turn after which it may be written.
        zeroes_maximal: a 0 written in it makes the ``maximal`` cell of that row 0 (002).
        derived: computed from the played columns, no write actions (``maximal``).
        requires: (rows, columns) -> None, or what the ruleset lacks for this kind.
        rule: the rule in words.
    """

    name: str
    opens: int
    rule: str
    fronts: Callable[[Sequence[str]], list[list[int]]] | None = None
    last_write_roll: int = ANY_ROLL
    first_write_roll: int = 1
    zeroes_maximal: bool = False
    derived: bool = False
    requires: Callable[[Sequence[str], Sequence[str]], str | None] | None = None


COLUMN_KINDS: dict[str, ColumnKind] = {
    k.name: k
    for k in (
        ColumnKind("down", OPEN_FRONT, "top to bottom", _fronts_down, zeroes_maximal=True),
        ColumnKind("up", OPEN_FRONT, "bottom to top", _fronts_up, zeroes_maximal=True),
        ColumnKind("free", OPEN_ANY, "any empty cell", zeroes_maximal=True),
        ColumnKind("announce", OPEN_ANNOUNCED, "only the cell announced after roll 1", zeroes_maximal=True),
        ColumnKind("hand", OPEN_ANY, "any empty cell, right after roll 1 only", last_write_roll=1),
        ColumnKind(
            "middle",
            OPEN_FRONT,
            "from max upward and from min downward",
            _fronts_middle,
            zeroes_maximal=True,
            requires=_needs_max_min,
        ),
        ColumnKind(
            "updown",
            OPEN_FRONT,
            "from the top and from the bottom (the fronts may pass)",
            _fronts_updown,
            zeroes_maximal=True,
        ),
        ColumnKind("free2", OPEN_ANY, "any empty cell, after roll 1 or 2 only", last_write_roll=2),
        ColumnKind(
            "second",
            OPEN_ANY,
            "any empty cell, right after roll 2 only (003's variation)",
            first_write_roll=2,
            last_write_roll=2,
            zeroes_maximal=True,
        ),
        ColumnKind(
            "oddeven",
            OPEN_FRONT,
            "odd rows (1st, 3rd, ...) in order from the top, even rows "
            "(2nd, 4th, ...) in order from the bottom (003's variation)",
            _fronts_oddeven,
            zeroes_maximal=True,
        ),
        ColumnKind(
            "answer",
            OPEN_ANSWER,
            "the row of the previous turn's announcement (forced by "
            "answer_forced); any cell once the announce columns are full",
            requires=_needs_announce,
        ),
        ColumnKind("mandatory", OPEN_LAST, "any empty cell once every other column but after_row is full"),
        ColumnKind("after_row", OPEN_AFTER_ROW, "a row once it is written in every other column but mandatory"),
        ColumnKind(
            "copy",
            OPEN_COPY,
            "the row the previous player has just written (in solitaire: "
            "the row of the previous turn's write); any empty cell once every other column but "
            "mandatory and after_row is full",
            zeroes_maximal=True,
        ),
        ColumnKind(
            "maximal",
            OPEN_NONE,
            "derived: per row the best value of the played columns (min: the lowest), 0 if a zeroing column holds 0",
            derived=True,
            requires=_needs_played,
        ),
    )
}


def column_fronts(kind: str, rows: Sequence[str]) -> list[list[int]]:
    """The row sequences whose first empty cell is open, for a front-filled column kind."""
    fronts = COLUMN_KINDS[kind].fronts if kind in COLUMN_KINDS else None
    if fronts is None:
        raise ValueError(f"{kind!r} is not a front-filled column kind")
    return fronts(list(rows))


def front_masks(kind: str, rows: Sequence[str]) -> tuple[int, int]:
    """(rows of the downward front, rows of the upward front) of a front-filled kind:
    each front of :attr:`ColumnKind.fronts` must run strictly down or up the sheet (it may
    skip rows), at most one each way (then its first empty cell is the topmost /
    bottommost empty row of its rows)."""
    down = up = 0
    for front in column_fronts(kind, rows):
        mask = sum(1 << r for r in front)
        steps = [b - a for a, b in zip(front, front[1:])]
        if all(s > 0 for s in steps) and not down:
            down = mask
        elif all(s < 0 for s in steps) and not up:
            up = mask
        else:
            raise ValueError(
                f"column kind {kind!r}: a front must run down or up the sheet, one each way at most: {front}"
            )
    return down, up
