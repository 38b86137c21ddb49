"""A game record as one self-contained HTML page: the game step by step in a browser.

    from jamb_env.replay.records import read_records
    from jamb_env.replay.html import replay_html
    from jamb_env.utils.files import write_text_file
    write_text_file("game.html", replay_html(read_records("game.jsonl")[0]))

The page needs no server and no network: its CSS and JavaScript are inline, the game is
one JSON block (``<script type="application/json" id="data">``) and a small script draws
each step from it. Every step's sheet comes from :func:`jamb_env.render.sheet.sheet_view` on
the state that :func:`jamb_env.replay.records.replay` reaches, and every step's text,
points and reward from the engine replaying it, so no rule is restated here and nothing a
record's lines claim is shown unchecked. ``jamb-play --html OUT.html`` writes it
(``--watch`` and ``--replay``).

The page is made of static files (package data in ``jamb_env/replay/static/``, read with
:func:`static_text`): ``replay.html`` (the page, with ``@TITLE@``, ``@STYLE@``,
``@DATA@`` and ``@SCRIPT@`` to fill), ``replay.css`` and ``replay.js``, and the sheet's
drawing ``sheet.css`` and ``sheet.js``, which ``jamb-web``'s page shares (one copy).

Element ids for tests and scripts: ``#first``, ``#prev``, ``#next``, ``#last`` (buttons;
the left/right arrow keys, Home and End do the same), ``#step`` ("step k / n"), ``#score``
(the score at the shown step, a plain integer), ``#action``, ``#points``, ``#dice``,
``#sheet``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from functools import cache
from importlib import resources

from jamb_env.render.sheet import CELL_STATES, PARTS, sheet_view
from jamb_env.replay.records import GameRecord, RecordError, replay

__all__ = ["replay_html", "replay_states", "page_data", "static_text"]


@cache
def static_text(name: str) -> str:
    """The text of ``jamb_env/replay/static/<name>`` (package data: ``sheet.js``,
    ``sheet.css``, ``replay.html``, ``replay.js``, ``replay.css``)."""
    return resources.files("jamb_env.replay").joinpath("static", name).read_text(encoding="utf-8")


def replay_states(record: GameRecord) -> Iterator[tuple[object, dict | None]]:
    """Yield ``(env, None)`` at the start (after the reset, the first roll made), then
    ``(env, step)`` after each recorded step: :func:`jamb_env.replay.records.replay` with the
    start state in front, ``step`` the engine's own record of the action replayed (its
    text, reward, score and dice; not the record's line). The same env is yielded each
    time (read it before the next).

    Raises:
        RecordError: the record's ruleset cannot be loaded, or a step does not replay
            (illegal action, dice that differ, a step after the game's end), or the
            record's end line disagrees with the replay (score, or the game not over).
    """
    from jamb_env.env import JambEnv

    where = record.source or "the record"
    try:
        env = JambEnv(record.ruleset, illegal_action="raise")
    except (ValueError, OSError) as exc:  # RulesetError, a missing ruleset file
        raise RecordError(f"{where}: {exc}") from exc
    env.reset(seed=record.seed)  # replay() resets again with the same seed: the same game
    yield env, None
    again = GameRecord(record.ruleset, record.seed, record.player)
    for after, _ in replay(record, env, into=again):  # it checks the end line too
        yield after, again.steps[-1]


def page_data(record: GameRecord) -> dict:
    """What the page shows, as JSON-ready data: the game's header (ruleset, columns, rows,
    seed, player, final score) and ``steps``, one per state (index 0 is the start,
    index k the state after step k), each with the sheet (:func:`sheet_view`), the dice,
    the action that led there with the dice it was chosen on and those it kept (a
    re-roll), its points and the running score. Raises RecordError as
    :func:`replay_states` does."""
    steps: list[dict] = []
    rules = None
    before: list[int] = []
    for env, step in replay_states(record):
        rules = env.ruleset
        view = sheet_view(rules, env.game, env.legal_mask())
        item = {
            "turn": view["turn"],
            "roll": view["roll"],
            "dice": view["dice"],
            "score": int(view["score"]),
            "announced": view["announced"],
            "answer_due": view["answer_due"],
            "copy_row": view["copy_row"],
            "jokers": view["jokers"],
            "cells": [[[CELL_STATES.index(s), v] for s, v in line] for line in view["cells"]],
            "parts": [[int(p) for p in part] for part in view["parts"]],
            "totals": {c: int(v) for c, v in view["totals"].items()},
            "action": None,
            "kind": None,
            "target": None,
            "before": [],
            "kept": None,
            "points": 0,
            "at": None,
        }
        if step is not None:
            action = int(step["action"])
            act = env.decode_action(action)
            item["action"] = env.action_to_string(action)
            item["kind"] = act.kind
            item["before"] = before
            item["points"] = item["score"] - steps[-1]["score"]
            item["reward"] = float(step["reward"])
            item["at"] = f"turn {step['turn'] + 1}, roll {step['roll']}"
            if act.kind == "reroll":
                item["kept"] = [bool(x) for x in act.keep]
            elif act.column is not None and act.row is not None:  # Joly's jokers and basket name no cell
                item["target"] = [list(rules.columns).index(act.column), list(rules.rows).index(act.row)]
        steps.append(item)
        before = view["dice"]
    assert rules is not None  # replay_states yields the start at least
    return {
        "title": rules.name,
        "ruleset": record.ruleset,
        "seed": record.seed,
        "player": record.player,
        "columns": list(rules.columns),
        "rows": list(rules.rows),
        "parts": list(PARTS),
        "cell_states": list(CELL_STATES),
        "num_cells": rules.num_cells,
        "dice": rules.dice,
        "final_score": record.final_score,
        "steps": steps,
    }


def _json_for_script(data: dict) -> str:
    """JSON that cannot end its ``<script>`` block early: ``<``, ``>`` and ``&`` (so ``</``
    and ``<!--``) as ``\\u`` escapes, valid JSON all the same."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def replay_html(record: GameRecord) -> str:
    """The game of ``record`` as one self-contained HTML page (no server, no network).

    It shows the game step by step, from the start (step 0, the first roll) to the state
    after the last action (step n): the sheet (rows x columns with written values, open
    cells with the value a write would get, announceable cells, the cell the step wrote
    or announced outlined, each column's upper, bonus, difference, lower and total), the
    dice (and for a re-roll the dice it was chosen on, the kept ones marked), the action,
    the turn and roll, its points (and the record's reward) and the running score.
    First / previous / next / last buttons and the arrow keys move between steps.

    Raises:
        RecordError: a record whose replay fails (its ruleset cannot be loaded, an illegal
            step, dice that differ from the env's, or an end line the replay contradicts).
    """
    data = page_data(record)
    who = f"{record.player} on {record.ruleset}, seed {record.seed}"
    head, tail = _page().split("@DATA@")  # split first: a name holding "@DATA@" stays text
    return head.replace("@TITLE@", html.escape(f"Jamb replay: {who}")) + _json_for_script(data) + tail


@cache
def _page() -> str:
    """``replay.html`` with the sheet's and the page's own CSS and JavaScript inlined."""
    style = static_text("sheet.css") + static_text("replay.css")
    script = static_text("sheet.js") + static_text("replay.js")
    return static_text("replay.html").replace("@STYLE@", style).replace("@SCRIPT@", script)
