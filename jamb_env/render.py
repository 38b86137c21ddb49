"""Text rendering of a scoresheet (the env's "ansi" and "human" render modes)."""

from __future__ import annotations

import numpy as np

from . import rules as core
from .rules import GameState, Ruleset


def render_sheet(rules: Ruleset, st: GameState, mask: np.ndarray | None = None) -> str:
    """The scoresheet as text: rows x columns, totals, dice and roll.

    Written cells show their value; empty cells show ``*`` where a write is legal now
    (from ``mask``) and ``.`` elsewhere. Totals follow RULES.md §2 crediting.
    """
    lay = core.layout(rules)
    R = rules.num_rows
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
    open_cells = np.zeros(rules.num_cells, dtype=bool)
    if mask is not None and len(mask) == lay.num_actions:
        open_cells = np.asarray(mask[lay.write_offset :], dtype=bool)
    for r, row in enumerate(rules.rows):
        cells = []
        for c in range(len(cols)):
            if int(st.filled[c]) >> r & 1:
                cells.append(str(int(st.values[c, r])))
            else:
                cells.append("*" if open_cells[c * R + r] else ".")
        lines.append(f"{row:<12}" + "".join(f"{x:>{width}}" for x in cells))
    parts = [rules.column_parts(st.values[c], int(st.filled[c])) for c in range(len(cols))]
    for i, name in enumerate(("upper", "bonus", "difference", "lower")):
        lines.append(f"{name:<12}" + "".join(f"{p[i]:>{width}}" for p in parts))
    totals = core.column_totals(rules, st)
    lines.append(f"{'total':<12}" + "".join(f"{totals[c]:>{width}}" for c in cols))
    extra = "".join(f"  {k} {v}" for k, v in totals.items() if k not in cols)
    lines.append(f"score {sum(totals.values())}{extra}")
    return "\n".join(lines)
