"""A game record as one self-contained HTML page: the game step by step in a browser.

    from jamb_env.replay.records import read_records
    from jamb_env.replay.html import replay_html
    from jamb_env.utils.files import write_text_file
    write_text_file("game.html", replay_html(read_records("game.jsonl")[0]))

The page needs no server and no network: its CSS and JavaScript are inline, the game is
one JSON block (``<script type="application/json" id="data">``) and a small script draws
each step from it. Every step's sheet comes from :func:`jamb_env.render.sheet.sheet_view` on
the state that :func:`jamb_env.replay.records.replay` reaches, so no rule is restated here.
``scripts/play.py --html OUT.html`` writes it (``--watch`` and ``--replay``).

Element ids for tests and scripts: ``#first``, ``#prev``, ``#next``, ``#last`` (buttons;
the left/right arrow keys, Home and End do the same), ``#step`` ("step k / n"), ``#score``
(the score at the shown step, a plain integer), ``#action``, ``#points``, ``#dice``,
``#sheet``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator

from jamb_env.render.sheet import CELL_STATES, PARTS, sheet_view
from jamb_env.replay.page_js import SHEET_JS
from jamb_env.replay.records import GameRecord, RecordError, replay

__all__ = ["replay_html", "replay_states", "page_data"]


def replay_states(record: GameRecord) -> Iterator[tuple[object, dict | None]]:
    """Yield ``(env, None)`` at the start (after the reset, the first roll made), then
    ``(env, step)`` after each recorded step: :func:`jamb_env.replay.records.replay` with the
    start state in front. The same env is yielded each time (read it before the next).

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
    for env, step in replay(record, env):  # it checks the end line too
        yield env, step


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
    for k, (env, step) in enumerate(replay_states(record)):
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
            if isinstance(step.get("reward"), (int, float)):
                item["reward"] = float(step["reward"])
            if isinstance(step.get("turn"), int) and isinstance(step.get("roll"), int):
                item["at"] = f"turn {step['turn'] + 1}, roll {step['roll']}"
            if act.kind == "reroll":
                item["kept"] = [bool(x) for x in act.keep]
            else:
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
    head, tail = _PAGE.split("@DATA@")  # split first: a name holding "@DATA@" stays text
    return head.replace("@TITLE@", html.escape(f"Jamb replay: {who}")) + _json_for_script(data) + tail


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1em; color: #111; background: #fafafa; }
h1 { font-size: 1.2em; margin: 0 0 .5em 0; }
#controls { display: flex; gap: .4em; align-items: center; margin-bottom: .6em; }
#controls button { font-size: 1em; padding: .25em .8em; }
#step { font-variant-numeric: tabular-nums; margin-left: .6em; min-width: 8em; }
#info { margin-bottom: .6em; line-height: 1.6; }
#info .label { color: #555; }
#action { font-weight: bold; }
#score { font-weight: bold; font-size: 1.2em; }
.dicerow { display: flex; gap: 8px; align-items: center; margin: .3em 0; min-height: 40px; }
.dicerow .label { color: #555; width: 9em; }
.die { width: 34px; height: 34px; border: 2px solid #000; border-radius: 6px; background: #fff;
       display: grid; grid-template-columns: repeat(3, 1fr); grid-template-rows: repeat(3, 1fr); box-sizing: border-box; padding: 3px; }
.die.empty { border: 1px solid #bbb; }
.die.kept { background: #cfe3ff; border-color: #1a4fa0; box-shadow: 0 0 0 2px #1a4fa0; }
.die span { align-self: center; justify-self: center; width: 6px; height: 6px; border-radius: 50%; }
.die span.pip { background: #000; }
.legend { font-size: .85em; color: #555; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #c8c8c8; padding: 1px 6px; text-align: right; min-width: 3.2em; }
th { background: #ddd; }
td.rowname { text-align: left; background: #f4f4f4; min-width: 6em; }
td.written { background: #fff; }
td.open { background: #d6f5d0; color: #1b7a1b; }
td.announce { background: #fff1a8; }
td.closed { background: #eee; }
td.target { outline: 3px solid #d02020; outline-offset: -3px; font-weight: bold; }
tr.part td { color: #44548a; }
tr.first td { border-top: 2px solid #000; }
tr.total td { border-top: 2px solid #000; font-weight: bold; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div id="controls">
<button id="first" type="button" title="first step (Home)">&laquo; first</button>
<button id="prev" type="button" title="previous step (left arrow)">&#x25C0; prev</button>
<button id="next" type="button" title="next step (right arrow)">next &#x25B6;</button>
<button id="last" type="button" title="last step (End)">last &raquo;</button>
<span id="step"></span>
</div>
<div id="info">
<div><span class="label">action:</span> <span id="at"></span> <span id="action"></span></div>
<div><span class="label">points:</span> <span id="points"></span> &nbsp; <span class="label">score:</span> <span id="score"></span><span id="extra"></span></div>
<div><span class="label">now:</span> <span id="now"></span></div>
</div>
<div class="dicerow" id="beforerow"><span class="label" id="beforelabel">chosen on</span><span id="before" class="dicerow"></span></div>
<div class="dicerow"><span class="label">dice</span><span id="dice" class="dicerow"></span></div>
<table id="sheet"></table>
<p class="legend">Green: open now (the value a write would get); yellow: announceable (a); grey: closed;
red outline: the cell this step wrote or announced; blue dice: kept by a re-roll.</p>
<noscript><p>This page draws the game with JavaScript; turn it on to see it.</p></noscript>
<script type="application/json" id="data">@DATA@</script>
<script>
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var S = D.steps, n = S.length - 1, k = 0;
@SHEET_JS@
  function $(id) { return document.getElementById(id); }
  function die(face, kept) {
    var d = el("div", "die" + (face ? "" : " empty") + (kept ? " kept" : ""));
    if (face) {
      d.title = String(face) + (kept ? " (kept)" : "");
      d.setAttribute("data-face", String(face));
      pips(d, face);
    }
    return d;
  }
  function dice(box, faces, kept) {
    box.textContent = "";
    if (!faces.length) { for (var i = 0; i < D.dice; i++) box.appendChild(die(0, false)); return; }
    faces.forEach(function (f, i) { box.appendChild(die(f, kept ? kept[i] : false)); });
  }
  function sheet(s) {
    sheetTable($("sheet"), D, s, function (td, r, c) {
      if (s.target && s.target[0] === c && s.target[1] === r) td.className += " target";
    });
  }
  function show(to) {
    k = Math.max(0, Math.min(n, to));
    var s = S[k];
    $("step").textContent = "step " + k + " / " + n;
    $("score").textContent = String(s.score);
    $("extra").textContent = extraTotals(D, s).map(function (t) { return "  " + t; }).join("");
    if (k === 0) {
      $("at").textContent = "start";
      $("action").textContent = "(the first roll)";
      $("points").textContent = "-";
    } else {
      $("at").textContent = s.at ? s.at + ":" : "step " + k + ":";
      $("action").textContent = s.action;
      var pts = (s.points >= 0 ? "+" : "") + s.points;
      if (typeof s.reward === "number" && s.reward !== s.points) pts += " (reward " + s.reward + ")";
      $("points").textContent = pts;
    }
    var now = "turn " + s.turn + "/" + D.num_cells + ", " + s.roll + ", announced " + s.announced;
    if (s.answer_due) now += ", answer due: " + s.answer_due;
    if (s.copy_row) now += ", copy offers: " + s.copy_row;
    if (s.jokers) now += ", jokers left: " + s.jokers;
    if (k === n && D.final_score !== null && D.final_score !== undefined) now += " (game over: final score " + D.final_score + ")";
    $("now").textContent = now;
    $("beforerow").style.visibility = k > 0 && s.before.length ? "visible" : "hidden";
    $("beforelabel").textContent = s.kind === "reroll" ? "re-rolled from" : "chosen on";
    dice($("before"), s.before, s.kept);
    dice($("dice"), s.dice, null);
    sheet(s);
    $("first").disabled = $("prev").disabled = k === 0;
    $("next").disabled = $("last").disabled = k === n;
  }
  $("title").textContent = "Jamb " + D.title + ": " + D.player + ", seed " + D.seed + " (" + n + " steps" +
    (D.final_score !== null && D.final_score !== undefined ? ", final score " + D.final_score : "") + ")";
  $("first").onclick = function () { show(0); };
  $("prev").onclick = function () { show(k - 1); };
  $("next").onclick = function () { show(k + 1); };
  $("last").onclick = function () { show(n); };
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var to = {ArrowLeft: k - 1, ArrowRight: k + 1, Home: 0, End: n}[e.key];
    if (to !== undefined) { e.preventDefault(); show(to); }
  });
  show(0);
})();
</script>
</body>
</html>
""".replace("@SHEET_JS@", SHEET_JS)
