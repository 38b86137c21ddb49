"""Rendering of a scoresheet: text (the env's "ansi" and "human" render modes) and
pictures ("rgb_array", drawn with Pillow)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import numpy as np

from jamb_env import rules as core
from jamb_env.rules import GameState, Ruleset

#: Characters that are not plain printable ASCII (the candidates :func:`printable` looks at).
_NOT_ASCII = re.compile(r"[^\x20-\x7e]")
#: Unicode categories :func:`printable` escapes: controls (C0, DEL, C1: ESC, CSI, OSC ...),
#: format characters (bidirectional overrides, zero-width ones), lone surrogates, line and
#: paragraph separators.
_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def _escape_char(match: re.Match, keep: str) -> str:
    ch = match.group()
    if ch in keep or unicodedata.category(ch) not in _UNSAFE:
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: object, newlines: bool = False) -> str:
    """``str(text)`` safe to show on a terminal: every control character (ESC and so the
    start of any CSI/OSC sequence, BEL, CR, backspace, the C1 controls), format character
    (bidirectional overrides, zero-width marks), lone surrogate and line separator is
    written as a visible escape such as ``\\x1b`` or ``\\u202e``; the rest is kept as
    it is. ``newlines``: keep ``\\n`` (multi-line messages); else it is escaped too.

    Every string that comes from a file (a record's player or step text, a ruleset's
    name, columns and rows, a path, an error message quoting them) goes through this
    before it is printed; for rich markup, escape the result too
    (:func:`agents.apps.terminal.shown`)."""
    text = str(text)
    keep = "\n" if newlines else ""
    return _NOT_ASCII.sub(lambda m: _escape_char(m, keep), text) if _NOT_ASCII.search(text) else text


#: What an empty cell shows: ``open`` (writable now), ``announce`` (announceable now), ``closed``.
CELL_STATES = ("written", "open", "announce", "closed")


def sheet_view(rules: Ruleset, st: GameState, mask: np.ndarray | None = None) -> dict:
    """The scoresheet as data, for every renderer (text, rich, pictures).

    Returns a dict: ``cells`` (R rows of C ``(state, value)`` pairs: ``written`` with its
    value, ``open`` with the value a write would get now, ``announce`` or ``closed`` with
    None), ``parts`` (C tuples of upper, bonus, difference, lower), ``totals`` (column id
    -> points, derived columns included), ``score`` (points), and the turn: ``turn``
    (1-based; the cells written once the game is over), ``roll`` (``"roll 2/3"`` or
    ``"no roll"``), ``dice`` (list of faces, empty before a roll), ``announced``
    (``"column/row"`` or ``"-"``), ``answer_due`` and ``copy_row`` (a row name or None),
    ``jokers`` (:func:`jokers_text`).
    """
    lay = core.layout(rules)
    R = rules.num_rows
    mask = (
        np.zeros(lay.num_actions, dtype=bool)
        if mask is None or len(mask) != lay.num_actions
        else np.asarray(mask, dtype=bool)
    )
    open_cells = mask[lay.writes]
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
        "turn": st.turn + (0 if core.is_over(rules, st) else 1),
        "roll": f"roll {st.roll}/{core.max_rolls(rules, st)}" if st.roll else "no roll",
        "dice": [int(d) for d in st.dice] if st.roll else [],
        "announced": "/".join(rules.cell_name(st.announced)) if st.announced >= 0 else "-",
        "answer_due": rules.rows[st.answer_due] if st.answer_due >= 0 else None,
        "copy_row": rules.rows[st.copy_row] if st.copy_row >= 0 else None,
        "jokers": jokers_text(rules, st),
    }


def jokers_text(rules: Ruleset, st: GameState) -> str | None:
    """Joly's jokers left as text (``"1 2 4 6 J K K"``: fixed values, free ``J``s, baskets
    ``K``), ``"none"`` once all are used, None without jokers (RULES.md §6)."""
    if not rules.jokers:
        return None
    left = core.jokers_left(rules, st)
    parts = [str(v) for v in left["fixed"]] + ["J"] * left["free"] + ["K"] * left["baskets"]
    return " ".join(parts) or "none"


def render_sheet(rules: Ruleset, st: GameState, mask: np.ndarray | None = None) -> str:
    """The scoresheet as text: rows x columns, totals, dice and roll.

    Written cells show their value; empty cells show ``*`` where a write is legal now
    (from ``mask``) and ``.`` elsewhere. Totals follow RULES.md §2 crediting.
    """
    view = sheet_view(rules, st, mask)
    cols = [printable(c) for c in rules.columns]  # names from the ruleset's file: shown safely
    width = max(8, *(len(c) + 1 for c in cols))
    head = f"{'':<12}" + "".join(f"{c:>{width}}" for c in cols)
    lines = []
    dice = " ".join(map(str, view["dice"])) or "-"
    lines.append(
        f"{printable(rules.name)}  turn {view['turn']}/{rules.num_cells}  {view['roll']}  dice [{dice}]  "
        f"announced {printable(view['announced'])}"
    )
    if view["answer_due"] is not None:
        lines.append(f"answer due: {printable(view['answer_due'])}")
    if view["copy_row"] is not None:
        lines.append(f"copy offers: {printable(view['copy_row'])}")
    if view["jokers"] is not None:
        lines.append(f"jokers left: {view['jokers']}")
    lines.append(head)
    shown = {"open": "*", "announce": ".", "closed": "."}
    for row, line in zip(rules.rows, view["cells"]):
        cells = [str(v) if state == "written" else shown[state] for state, v in line]
        lines.append(f"{printable(row):<12}" + "".join(f"{x:>{width}}" for x in cells))
    for i, name in enumerate(("upper", "bonus", "difference", "lower")):
        lines.append(f"{name:<12}" + "".join(f"{p[i]:>{width}}" for p in view["parts"]))
    totals = view["totals"]
    lines.append(f"{'total':<12}" + "".join(f"{totals[c]:>{width}}" for c in rules.columns))
    extra = "".join(f"  {printable(k)} {v}" for k, v in totals.items() if k not in rules.columns)
    lines.append(f"score {view['score']}{extra}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- pictures
PARTS = ("upper", "bonus", "difference", "lower")
_PAD, _LINE, _DIE = 8, 18, 34
_FILL = {"written": "white", "open": "#d6f5d0", "announce": "#fff1a8", "closed": "#eeeeee"}
#: Pip positions (3x3 grid, column and row in 0..2) of each face.
_PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)],
    5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
    6: [(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)],
}


@lru_cache(maxsize=1)
def _font():
    from PIL import ImageFont

    return ImageFont.load_default(size=13)


def _geometry(rules: Ruleset, text_width) -> tuple[int, int, int, int, int]:
    """(width, height, label width, cell width, top of the grid) in pixels: from the ruleset
    only, so every picture of a ruleset has the same size (multiples of 16, for video codecs)."""
    cols, n = list(rules.columns), rules.dice
    long_col, long_row = max(cols, key=text_width), max(rules.rows, key=text_width)
    cell = int(max(text_width("-8888"), *map(text_width, cols))) + 10
    label = int(max(map(text_width, (*rules.rows, *PARTS, "total")))) + 12
    worst = [
        f"{rules.name}  turn {rules.num_cells}/{rules.num_cells}  roll 88/88",
        f"announced {long_col}/{long_row}",
        f"answer due: {long_row}",
        "score 88888" + "".join(f"  {k} 8888" for k in rules.derived_columns),
    ]
    width = max(label + cell * len(cols), n * (_DIE + 8), *map(text_width, worst)) + 2 * _PAD
    top = _PAD + 3 * _LINE + _DIE + 10
    height = top + (rules.num_rows + len(PARTS) + 2) * _LINE + _LINE + _PAD
    return -(-int(width) // 16) * 16, -(-height // 16) * 16, label, cell, top


def _die(draw, x: int, y: int, face: int | None) -> None:
    if face is None:  # no roll yet: an empty slot
        draw.rounded_rectangle((x, y, x + _DIE, y + _DIE), radius=5, outline="#bbbbbb", width=1)
        return
    draw.rounded_rectangle((x, y, x + _DIE, y + _DIE), radius=5, fill="white", outline="black", width=2)
    step, r = _DIE / 4, 3
    for i, j in _PIPS[face]:
        cx, cy = x + step * (i + 1), y + step * (j + 1)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="black")


def sheet_image(rules: Ruleset, st: GameState, mask: np.ndarray | None = None) -> np.ndarray:
    """The scoresheet as a picture (the env's "rgb_array" render mode), from :func:`sheet_view`.

    Shows the ruleset, turn, roll, announced cell and answer due; the dice as faces (empty
    slots before a roll); the rows x columns grid: written values, open cells (green,
    with the value a write gets now, from ``mask``), announceable cells (yellow, ``a``),
    closed ones (grey); upper, bonus, difference, lower and total per column; the score.

    Returns:
        uint8 ``(H, W, 3)`` RGB array (a new one each call); H and W depend on the ruleset
        only (multiples of 16).
    """
    from PIL import Image, ImageDraw

    font, view = _font(), sheet_view(rules, st, mask)
    img = Image.new("RGB", (1, 1), "white")
    draw = ImageDraw.Draw(img)
    W, H, label, cell, top = _geometry(rules, lambda s: draw.textlength(s, font=font))
    img = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(img)

    def text(x, y, s, fill="black", right=None):
        if right is not None:
            x = right - draw.textlength(s, font=font)
        draw.text((x, y + 2), s, fill=fill, font=font)

    text(_PAD, _PAD, f"{rules.name}  turn {view['turn']}/{rules.num_cells}  {view['roll']}")
    jokers = f"   jokers left: {view['jokers']}" if view["jokers"] is not None else ""
    text(_PAD, _PAD + _LINE, f"announced {view['announced']}{jokers}", fill="#8a6d00" if st.announced >= 0 else "black")
    if view["answer_due"] is not None:
        text(_PAD, _PAD + 2 * _LINE, f"answer due: {view['answer_due']}", fill="#a00000")
    elif view["copy_row"] is not None:
        text(_PAD, _PAD + 2 * _LINE, f"copy offers: {view['copy_row']}", fill="#a00000")
    dice = view["dice"] or [None] * rules.dice
    for k, face in enumerate(dice):
        _die(draw, _PAD + k * (_DIE + 8), _PAD + 3 * _LINE + 4, face)

    cols = list(rules.columns)
    x0, right = _PAD, _PAD + label + cell * len(cols)
    draw.rectangle((x0, top, right, top + _LINE), fill="#dddddd")
    for c, name in enumerate(cols):
        text(0, top, name, right=x0 + label + (c + 1) * cell - 5)
    y = top + _LINE
    for row, line in zip(rules.rows, view["cells"]):
        text(x0 + 2, y, row)
        for c, (state, value) in enumerate(line):
            left = x0 + label + c * cell
            draw.rectangle((left, y, left + cell, y + _LINE), fill=_FILL[state], outline="#c8c8c8")
            shown = {"written": str(value), "open": str(value), "announce": "a", "closed": ""}[state]
            text(0, y, shown, fill="#1b7a1b" if state == "open" else "black", right=left + cell - 5)
        y += _LINE
    draw.line((x0, y, right, y), fill="black", width=2)
    for i, name in enumerate(PARTS):
        text(x0 + 2, y, name, fill="#44548a")
        for c, p in enumerate(view["parts"]):
            text(0, y, str(p[i]), fill="#44548a", right=x0 + label + (c + 1) * cell - 5)
        y += _LINE
    draw.line((x0, y, right, y), fill="black", width=1)
    text(x0 + 2, y, "total")
    for c, name in enumerate(cols):
        text(0, y, str(view["totals"][name]), right=x0 + label + (c + 1) * cell - 5)
    extra = "".join(f"  {k} {v}" for k, v in view["totals"].items() if k not in cols)
    text(x0, y + _LINE + 4, f"score {view['score']}{extra}")
    return np.array(img, dtype=np.uint8)
