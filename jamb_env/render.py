"""Text rendering of a scoresheet (the env's "ansi" and "human" render modes)."""

from __future__ import annotations

import numpy as np

from . import rules as core
from .rules import GameState, Ruleset


#: What an empty cell shows: ``open`` (writable now), ``announce`` (announceable now), ``closed``.
CELL_STATES = ("written", "open", "announce", "closed")


def sheet_view(rules: Ruleset, st: GameState, mask: np.ndarray | None = None) -> dict:
    """The scoresheet as data, for every renderer (text, rich, pictures).

    Returns a dict: ``cells`` (R rows of C ``(state, value)`` pairs: ``written`` with its
    value, ``open`` with the value a write would get now, ``announce`` or ``closed`` with
    None), ``parts`` (C tuples of upper, bonus, difference, lower), ``totals`` (column id
    -> points, derived columns included) and ``score`` (points).
    """
    lay = core.layout(rules)
    R = rules.num_rows
    mask = np.zeros(lay.num_actions, dtype=bool) if mask is None or len(mask) != lay.num_actions else np.asarray(mask, dtype=bool)
    open_cells = mask[lay.write_offset :]
    announceable = set(lay.announce_cells[mask[lay.announce_offset : lay.write_offset]].tolist())
    cells = []
    for r in range(R):
        line = []
        for c in range(len(rules.columns)):
            cell = c * R + r
            if int(st.filled[c]) >> r & 1:
                line.append(("written", int(st.values[c, r])))
            elif open_cells[cell] and st.roll:
                line.append(("open", int(rules.cell_values[st.roll - 1, st.dice_index, cell])))
            elif cell in announceable:
                line.append(("announce", None))
            else:
                line.append(("closed", None))
        cells.append(line)
    totals = core.column_totals(rules, st)
    return {
        "cells": cells,
        "parts": [rules.column_parts(st.values[c], int(st.filled[c])) for c in range(len(rules.columns))],
        "totals": totals,
        "score": sum(totals.values()),
    }


def render_sheet(rules: Ruleset, st: GameState, mask: np.ndarray | None = None) -> str:
    """The scoresheet as text: rows x columns, totals, dice and roll.

    Written cells show their value; empty cells show ``*`` where a write is legal now
    (from ``mask``) and ``.`` elsewhere. Totals follow RULES.md §2 crediting.
    """
    view = sheet_view(rules, st, mask)
    cols = list(rules.columns)
    width = max(8, *(len(c) + 1 for c in cols))
    head = f"{'':<12}" + "".join(f"{c:>{width}}" for c in cols)
    lines = []
    roll = f"roll {st.roll}/{core.max_rolls(rules, st)}" if st.roll else "no roll"
    dice = " ".join(str(int(d)) for d in st.dice) if st.roll else "-"
    announced = "/".join(rules.cell_name(st.announced)) if st.announced >= 0 else "-"
    lines.append(f"{rules.name}  turn {st.turn + (0 if core.is_over(rules, st) else 1)}/{rules.num_cells}  "
                 f"{roll}  dice [{dice}]  announced {announced}")
    if st.answer_due >= 0:
        lines.append(f"answer due: {rules.rows[st.answer_due]}")
    lines.append(head)
    shown = {"open": "*", "announce": ".", "closed": "."}
    for row, line in zip(rules.rows, view["cells"]):
        cells = [str(v) if state == "written" else shown[state] for state, v in line]
        lines.append(f"{row:<12}" + "".join(f"{x:>{width}}" for x in cells))
    for i, name in enumerate(("upper", "bonus", "difference", "lower")):
        lines.append(f"{name:<12}" + "".join(f"{p[i]:>{width}}" for p in view["parts"]))
    totals = view["totals"]
    lines.append(f"{'total':<12}" + "".join(f"{totals[c]:>{width}}" for c in cols))
    extra = "".join(f"  {k} {v}" for k, v in totals.items() if k not in cols)
    lines.append(f"score {view['score']}{extra}")
    return "\n".join(lines)
