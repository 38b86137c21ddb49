"""The page of ``jamb-web`` (agents/apps/web/server.py): one HTML document with inline CSS and
JavaScript that talks JSON to the server's API; nothing is fetched from elsewhere.

It draws only what the server sends (the engine's sheet, dice, legal moves, scores):
no rule is restated in the script. Every name and text from the server is set with
``textContent`` (or as a ``data-`` attribute), never parsed as HTML.

Element ids, for tests and for anyone scripting the page: ``#ruleset``, ``#seed``,
``#mode`` (play / watch / table), ``#name``, ``#coach``, ``#watch-agent``, ``#seats``
(the table's seat rows, ``.seat-kind`` and ``.seat-name``), ``#add-seat``, ``#scoring``,
``#newgame``; ``#game`` (its ``data-id``, ``data-steps``, ``data-over``, ``data-human`` (a person
to move) and ``data-busy`` follow the game), ``#status``, ``#dice`` (``.die`` buttons with ``data-i`` and
``data-face``, ``.kept`` when kept), ``#roll``, ``#undo``, ``#hint``, ``#playhint``,
``#hint-coach``, ``#hintbox`` (``data-move``: the hinted move as JSON), ``#hinttext``,
``#reason``, ``#options``, ``#other-move`` and ``#other-play`` (Joly's jokers and basket,
when legal), ``#speed``, ``#pause``, ``#agent-step``, ``#sheets`` (one
``table.sheet`` per sheet; cells ``td.cell`` with ``data-col``, ``data-row`` and their
state as class: ``open``, ``announce``, ``written``, ``closed``; the rows under them: the
parts, ``total`` and ``tr.bonusrow``, the upper section against the bonus threshold),
``#log`` (the last moves, newest first), ``#result``, ``#record-link``, ``#replay-link``,
``#savedlist`` (the saved games, ``li`` with ``data-id``), ``#error``.
"""

from jamb_env.replay.page_js import SHEET_JS

PAGE_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Jamb</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0; color: #111; background: #f6f6f3; }
header { background: #23395b; color: #fff; padding: .5em 1em; display: flex; gap: 1em; align-items: baseline; }
header h1 { margin: 0; font-size: 1.3em; }
main { display: flex; gap: 1em; padding: .8em 1em; align-items: flex-start; }
aside { flex: 0 0 16em; display: flex; flex-direction: column; gap: 1em; }
.gamegrid { display: flex; gap: 1em; flex-wrap: wrap; align-items: flex-start; }
.side { flex: 1 1 22em; max-width: 36em; }
.gamegrid.match .side { order: -1; flex-basis: 100%; max-width: none; }  /* a table's sheets below the dice */
.gamegrid.match #log { max-height: 6em; }
section { background: #fff; border: 1px solid #d4d4cf; border-radius: 6px; padding: .6em .8em; }
#setup label { display: block; margin: .35em 0 .1em; font-size: .85em; color: #444; }
#setup select, #setup input { width: 100%; box-sizing: border-box; }
#seats .seatrow { display: flex; gap: .3em; margin: .2em 0; }
#seats .seatrow select { width: 45%; } #seats .seatrow input { width: 45%; }
button { font-size: .95em; padding: .25em .7em; cursor: pointer; }
button:disabled { cursor: default; }
#newgame { margin-top: .6em; width: 100%; font-weight: bold; }
.hidden { display: none !important; }
#game { flex: 1 1 auto; min-width: 0; }
#title { font-weight: bold; margin-bottom: .3em; }
#seatsbar { display: flex; gap: .8em; flex-wrap: wrap; margin: .2em 0 .4em; }
.seatchip { padding: .1em .5em; border-radius: 4px; border: 1px solid #bbb; }
.seatchip.moving { border: 2px solid #d07a00; background: #fff3dc; font-weight: bold; }
#status { margin: .3em 0; color: #333; }
#dice { display: flex; gap: 8px; margin: .5em 0; min-height: 46px; }
.die { width: 44px; height: 44px; border: 2px solid #222; border-radius: 8px; background: #fff; padding: 4px;
       display: grid; grid-template-columns: repeat(3, 1fr); grid-template-rows: repeat(3, 1fr); box-sizing: border-box; }
.die span { align-self: center; justify-self: center; width: 8px; height: 8px; border-radius: 50%; }
.die span.pip { background: #111; }
.die.kept { background: #cfe3ff; border-color: #1a4fa0; box-shadow: 0 0 0 3px #1a4fa0; }
.die.hinted { outline: 3px dashed #d07a00; outline-offset: 2px; }
#controls, #watchbar { display: flex; gap: .4em; flex-wrap: wrap; align-items: center; margin: .3em 0; }
#hintbox { border-left: 4px solid #d07a00; background: #fff8ec; padding: .3em .6em; margin: .5em 0; }
#hinttext { font-weight: bold; }
#reason { margin: .2em 0; }
#options td { padding: 0 .6em 0 0; border: none; text-align: left; min-width: 0; }
#options tr.chosen td { font-weight: bold; }
#unit { font-size: .8em; color: #555; }
#sheets { display: flex; gap: 1em; flex-wrap: wrap; }
.sheetbox .caption { font-weight: bold; margin-bottom: .2em; }
.sheetbox.inplay .caption { color: #b05f00; }
table.sheet { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: .92em; }
table.sheet th, table.sheet td { border: 1px solid #c8c8c8; padding: 1px 6px; text-align: right; min-width: 2.6em; }
table.sheet th { background: #e3e3de; }
table.sheet td.rowname { text-align: left; background: #f4f4f0; }
td.cell.written { background: #fff; }
td.cell.open { background: #d6f5d0; color: #1b7a1b; }
td.cell.announce { background: #fff1a8; }
td.cell.closed { background: #eee; }
.clickable td.cell.open, .clickable td.cell.announce { cursor: pointer; }
.clickable td.cell.open:hover, .clickable td.cell.announce:hover { outline: 2px solid #1a4fa0; outline-offset: -2px; }
td.cell.hinted { outline: 3px dashed #d07a00; outline-offset: -3px; font-weight: bold; }
td.cell .owner { font-size: .75em; margin-left: .3em; }
tr.part td { color: #44548a; } tr.first td { border-top: 2px solid #000; } tr.total td { border-top: 2px solid #000; font-weight: bold; }
tr.bonusrow td { font-size: .8em; color: #555; } tr.bonusrow td.reached { color: #1b7a1b; font-weight: bold; }
.p0 { color: #00838f; } .p1 { color: #ad1457; } .p2 { color: #c62828; } .p3 { color: #1565c0; } .p4 { color: #e65100; }
#log { font-size: .85em; color: #333; max-height: 12em; overflow: auto; margin: .4em 0 0; padding-left: 1.2em; }
#log li:first-child { font-weight: bold; }
#result { font-size: 1.1em; font-weight: bold; color: #1b5e20; margin: .4em 0; }
#error { color: #b00020; font-weight: bold; min-height: 1.2em; }
#saved { font-size: .9em; }
#saved ul { padding-left: 1em; margin: .3em 0; }
#saved li { margin: .25em 0; }
.legend { font-size: .8em; color: #555; }
</style>
</head>
<body>
<header><h1>Jamb</h1><span>play, get coached, watch an agent, or seat a table</span></header>
<main>
<aside>
<section id="setup">
  <label for="ruleset">preset</label><select id="ruleset"></select>
  <label for="seed">seed (empty: random)</label><input id="seed" type="number" min="0" step="1" placeholder="random">
  <label for="mode">mode</label>
  <select id="mode"><option value="play">play (with a coach)</option><option value="watch">watch an agent</option>
  <option value="table">a table of people and agents</option></select>
  <div id="play-opts">
    <label for="name">your name</label><input id="name" maxlength="40" value="human">
    <label for="coach">coach for hints</label><select id="coach"></select>
  </div>
  <div id="watch-opts" class="hidden"><label for="watch-agent">agent</label><select id="watch-agent"></select></div>
  <div id="table-opts" class="hidden">
    <label>seats, in order</label><div id="seats"></div>
    <button id="add-seat" type="button">add seat</button> <button id="drop-seat" type="button">remove seat</button>
    <label for="scoring">scoring</label>
    <select id="scoring"><option value="separate">a sheet each</option><option value="shared">one shared sheet</option></select>
    <label for="table-coach">coach for the people's hints</label><select id="table-coach"></select>
  </div>
  <button id="newgame" type="button">New game</button>
  <div id="error" role="alert"></div>
</section>
<section id="saved"><b>Saved games</b> <button id="refresh" type="button">refresh</button><ul id="savedlist"></ul>
<div class="legend">Open one to go on or look at it; every game is saved after every move.</div></section>
</aside>
<section id="game" class="hidden" data-steps="0" data-over="0" data-busy="0">
  <div id="title"></div>
  <div id="seatsbar"></div>
  <div id="status"></div>
  <div class="gamegrid" id="gamegrid">
  <div id="sheets"></div>
  <div class="side">
  <div id="dice"></div>
  <div id="controls">
    <button id="roll" type="button" title="re-roll the dice not kept (click dice to keep them)">Roll</button>
    <button id="undo" type="button" title="undo the last click on a die">Undo click</button>
    <select id="hint-coach" title="the coach asked for a hint"></select>
    <button id="hint" type="button">Hint</button>
    <button id="playhint" type="button" title="play the coach's move (asking for it first when no hint is shown)" disabled>Play hint</button>
    <span id="othermoves"></span>
  </div>
  <div id="watchbar" class="hidden">
    <label for="speed">agent speed</label>
    <select id="speed"><option value="0">instant</option><option value="150">fast</option>
    <option value="600" selected>normal</option><option value="1500">slow</option></select>
    <button id="pause" type="button">Pause</button>
    <button id="agent-step" type="button">One move</button>
  </div>
  <div id="hintbox" class="hidden">
    <div><span id="hintcoach"></span> suggests: <span id="hinttext"></span></div>
    <div id="reason"></div>
    <table id="options"></table>
    <div id="unit"></div>
  </div>
  <div id="result"></div>
  <p class="legend">Click dice to keep them, then Roll; click a green cell to write it (its value is what it scores now),
  a yellow one to announce it. Under the sheet: each column's parts, its total, and its upper section against the bonus
  threshold. Keys: r roll, h hint, p play the hint, u undo a click.</p>
  <div><a id="record-link" href="#">record (.jsonl)</a> &nbsp; <a id="replay-link" href="#" target="_blank" rel="noopener">replay page</a></div>
  <ul id="log"></ul>
  </div>
  </div>
</section>
</main>
<script>
(function () {
  "use strict";
  var CFG = null, S = null, keep = [], clicks = [], diceKey = "", hint = null, timer = null, paused = false, busy = false;
@SHEET_JS@
  function $(id) { return document.getElementById(id); }
  function option(select, value, text) { var o = el("option", "", text); o.value = value; select.appendChild(o); }
  function setBusy(b) { busy = b; $("game").setAttribute("data-busy", b ? "1" : "0"); }
  function showError(msg) { $("error").textContent = msg || ""; }
  function api(method, path, body) {
    var init = {method: method, headers: {}};
    if (method === "POST") { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body === undefined ? {} : body); }
    return fetch(path, init).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data && data.error ? data.error : ("HTTP " + r.status));
        return data;
      });
    });
  }
  function request(method, path, body) {
    setBusy(true); showError("");
    return api(method, path, body).then(function (data) { setBusy(false); return data; },
      function (err) { setBusy(false); showError(err.message); throw err; });
  }

  // ------------------------------------------------------------------ setup
  function seatRow(kind, name) {
    var row = el("div", "seatrow"), sel = el("select", "seat-kind"), inp = el("input", "seat-name");
    option(sel, "human", "person");
    CFG.agents.forEach(function (a) { option(sel, "agent:" + a, a); });
    sel.value = kind; inp.value = name || ""; inp.maxLength = CFG.max_name; inp.placeholder = "name";
    function sync() { inp.disabled = sel.value !== "human"; }
    sel.onchange = sync; sync();
    row.appendChild(sel); row.appendChild(inp); $("seats").appendChild(row);
  }
  function setupMode() {
    var m = $("mode").value;
    $("play-opts").classList.toggle("hidden", m !== "play");
    $("watch-opts").classList.toggle("hidden", m !== "watch");
    $("table-opts").classList.toggle("hidden", m !== "table");
  }
  function newGameBody() {
    var body = {ruleset: $("ruleset").value}, seed = $("seed").value.trim(), m = $("mode").value;
    if (seed !== "") body.seed = Number(seed);
    if (m === "play") {
      body.seats = [{human: $("name").value}];
      if ($("coach").value) body.coach = $("coach").value;
    } else if (m === "watch") {
      body.seats = [{agent: $("watch-agent").value}];
    } else {
      body.seats = Array.prototype.map.call(document.querySelectorAll("#seats .seatrow"), function (row) {
        var k = row.querySelector(".seat-kind").value;
        return k === "human" ? {human: row.querySelector(".seat-name").value} : {agent: k.slice(6)};
      });
      body.scoring = $("scoring").value;
      if ($("table-coach").value) body.coach = $("table-coach").value;
    }
    return body;
  }

  // ------------------------------------------------------------------ drawing
  function die(face, i) {
    var d = el("button", "die");
    d.type = "button";
    d.setAttribute("data-i", String(i)); d.setAttribute("data-face", String(face));
    d.title = "die " + (i + 1) + ": " + face;
    pips(d, face);
    d.onclick = function () { clickDie(i); };
    return d;
  }
  function drawDice() {
    var box = $("dice"); box.textContent = "";
    var dice = S.turn.dice, hk = hint && hint.move.move === "roll" ? hint.move.keep : null;
    dice.forEach(function (f, i) {
      var d = die(f, i);
      if (keep[i]) d.classList.add("kept");
      if (hk && hk.indexOf(i) >= 0) d.classList.add("hinted");
      d.disabled = !S.can_roll || busy;
      box.appendChild(d);
    });
    $("undo").disabled = !clicks.length || !S.can_roll;
  }
  function seatLabel(i) { var s = S.seats[i]; return "P" + (i + 1) + " " + s.name + (s.kind === "agent" ? " (agent)" : ""); }
  function drawSheet(sheet, index) {
    var box = el("div", "sheetbox" + (sheet.in_play ? " inplay" : ""));
    var cap = sheet.player === null ? "shared sheet" : seatLabel(sheet.player);
    box.appendChild(el("div", "caption" + (sheet.player !== null && S.kind === "match" ? " p" + sheet.player : ""),
      cap + ": " + sheet.score + " points" + (sheet.in_play ? "  (to move)" : "")));
    var t = el("table", "sheet"); t.setAttribute("data-sheet", String(index));
    var mine = sheet.in_play && S.human_to_move && !busy;
    if (mine) t.classList.add("clickable");
    var target = hint && (hint.move.move === "write" || hint.move.move === "announce") ? hint.move : null;
    sheetTable(t, S, sheet, function (td, r, c, st, cell) {
      var col = S.columns[c], row = S.rows[r];
      td.setAttribute("data-col", col); td.setAttribute("data-row", row);
      if (st === "open") td.title += " (scores " + cell[1] + " now)";
      if (sheet.owner && sheet.owner[r][c] >= 0 && st === "written") {
        var o = sheet.owner[r][c]; td.appendChild(el("span", "owner p" + o, "P" + (o + 1)));
      }
      if (mine && target && target.row === row && (target.move === "write" ? target.column === col : st === "announce")) td.classList.add("hinted");
      if (mine && (st === "open" || st === "announce")) {
        td.onclick = function () { cellMove(st === "open" ? {move: "write", column: col, row: row} : {move: "announce", row: row}); };
      }
    });
    var bonus = el("tr", "bonusrow"); bonus.appendChild(el("td", "rowname", "bonus at " + S.bonus_threshold));
    sheet.parts.forEach(function (p) {
      var reached = p[1] > 0;
      bonus.appendChild(el("td", reached ? "reached" : "", reached ? "+" + p[1] : p[0] + "/" + S.bonus_threshold));
    });
    t.appendChild(bonus);
    if (sheet.awards) {
      var aw = el("tr", "part"); aw.appendChild(el("td", "rowname", "goes to"));
      sheet.awards.forEach(function (w) { aw.appendChild(el("td", w >= 0 ? "p" + w : "", w >= 0 ? "P" + (w + 1) : "-")); });
      t.appendChild(aw);
    }
    var extra = extraTotals(S, sheet);
    box.appendChild(t);
    if (extra.length) box.appendChild(el("div", "legend", extra.join("  ")));
    return box;
  }
  function render() {
    var g = $("game");
    g.classList.remove("hidden");
    g.setAttribute("data-id", S.id); g.setAttribute("data-steps", String(S.steps)); g.setAttribute("data-over", S.over ? "1" : "0");
    g.setAttribute("data-human", S.human_to_move ? "1" : "0");
    $("gamegrid").classList.toggle("match", S.kind === "match");
    var key = S.steps + ":" + S.turn.dice.join(",");
    if (key !== diceKey) { diceKey = key; keep = S.turn.dice.map(function () { return false; }); clicks = []; }
    $("title").textContent = S.title + " (" + S.ruleset + "), seed " + S.seed + (S.kind === "match" ? ", " + S.scoring + " scoring" : "") + "  [game " + S.id + "]";
    var bar = $("seatsbar"); bar.textContent = "";
    S.seats.forEach(function (s, i) {
      var chip = el("span", "seatchip p" + i + (S.to_move === i ? " moving" : ""), seatLabel(i) + ": " + s.score);
      bar.appendChild(chip);
    });
    var t = S.turn, status = "";
    if (S.over) status = "Game over.";
    else {
      status = (S.human_to_move ? "Your move" : "Agent to move") + (S.kind === "match" ? " (" + seatLabel(S.to_move) + ")" : "") +
        ": turn " + t.turn + "/" + S.num_cells + ", roll " + t.roll + "/" + t.max_rolls;
      if (t.announced !== "-") status += ", announced " + t.announced;
      if (t.answer_due) status += ", answer due: " + t.answer_due;
      if (t.copy_row) status += ", copy offers: " + t.copy_row;
      if (t.jokers) status += ", jokers left: " + t.jokers;
    }
    if (!S.saved) status += "  (" + S.save_error + ")";
    $("status").textContent = status;
    drawDice();
    $("roll").disabled = !S.can_roll || busy;
    $("hint").disabled = !S.human_to_move || busy;
    $("playhint").disabled = !S.human_to_move || busy;
    if (S.coach && !$("hint-coach").getAttribute("data-set")) { $("hint-coach").value = S.coach; $("hint-coach").setAttribute("data-set", "1"); }
    var other = $("othermoves"); other.textContent = "";
    if (S.other_moves.length) {  // Joly's jokers and the basket: one list, one button
      var pick = el("select"); pick.id = "other-move";
      S.other_moves.forEach(function (m) { option(pick, String(m.action), m.text); });
      var go = el("button", "", "Play joker / basket"); go.type = "button"; go.id = "other-play";
      go.onclick = function () { cellMove({move: "action", action: Number(pick.value)}); };
      other.appendChild(pick); other.appendChild(go);
    }
    var agents = S.seats.some(function (s) { return s.kind === "agent"; });
    $("watchbar").classList.toggle("hidden", !agents);
    $("agent-step").disabled = S.over || S.human_to_move || busy;
    $("pause").textContent = paused ? "Resume" : "Pause";
    $("controls").classList.toggle("hidden", !S.seats.some(function (s) { return s.kind === "human"; }));
    var sheets = $("sheets"); sheets.textContent = "";
    S.sheets.forEach(function (sh, i) { sheets.appendChild(drawSheet(sh, i)); });
    var log = $("log"); log.textContent = "";
    S.last.slice().reverse().forEach(function (s) {  // the newest first
      var who = S.kind === "match" ? "P" + (s.player + 1) + " " : "";
      var pts = s.text.indexOf("write") === 0 && typeof s.reward === "number" ? "  (+" + s.reward + ")" : "";
      log.appendChild(el("li", S.kind === "match" ? "p" + s.player : "", who + s.text + pts));
    });
    if (S.over) {
      var r = S.result, text;
      if (S.kind === "match") {
        text = "Final scores: " + r.scores.map(function (x, i) { return seatLabel(i) + " " + x; }).join(", ") +
          ". " + (r.winners.length === 1 ? "Winner: " + seatLabel(r.winners[0]) : "Tied: " + r.winners.map(seatLabel).join(", "));
      } else text = "Game over: " + r.scores[0] + " points.";
      $("result").textContent = text;
    } else $("result").textContent = "";
    var rec = $("record-link"), rep = $("replay-link");
    rec.classList.toggle("hidden", !S.record); rep.classList.toggle("hidden", !S.replay);
    if (S.record) rec.href = S.record;
    if (S.replay) rep.href = S.replay;
    updateSaved();
    schedule();
  }
  function drawHint() {
    var box = $("hintbox");
    if (!hint) { box.classList.add("hidden"); box.removeAttribute("data-move"); return; }
    box.classList.remove("hidden");
    box.setAttribute("data-move", JSON.stringify(hint.move));
    $("hintcoach").textContent = "coach " + hint.coach;
    $("hinttext").textContent = hint.text;
    $("reason").textContent = hint.reason;
    var t = $("options"); t.textContent = "";
    hint.options.forEach(function (o) {
      var tr = el("tr", o.chosen ? "chosen" : "");
      tr.appendChild(el("td", "", o.text)); tr.appendChild(el("td", "", o.value === null ? "-" : o.value.toFixed(2)));
      t.appendChild(tr);
    });
    $("unit").textContent = hint.unit ? "values: " + hint.unit + " (" + hint.rated_by + ")" : "";
  }

  // ------------------------------------------------------------------ actions
  function took(state) { S = state; hint = null; drawHint(); render(); if (S.over) loadSaved(); location.hash = "g=" + S.id; }
  function clickDie(i) {
    if (!S || !S.can_roll || busy) return;
    keep[i] = !keep[i]; clicks.push(i); drawDice();
  }
  function undoClick() { if (!clicks.length) return; var i = clicks.pop(); keep[i] = !keep[i]; drawDice(); }
  function send(body) { return request("POST", "/api/games/" + S.id + "/move", body).then(took, function () { render(); }); }
  function roll() {
    if (busy || !S || !S.can_roll) return;
    var k = []; keep.forEach(function (x, i) { if (x) k.push(i); });
    return send({move: "roll", keep: k});
  }
  function cellMove(body) { if (!busy) send(body); }
  function askHint() {
    var coach = $("hint-coach").value;
    return request("POST", "/api/games/" + S.id + "/hint", coach ? {coach: coach} : {}).then(function (h) {
      hint = h; drawHint(); render(); return h;
    }, function () { return null; });
  }
  function playHint() {
    if (busy || !S || !S.human_to_move) return;
    if (!hint) { askHint().then(function (h) { if (h) playHint(); }); return; }  // ask first, then play it
    if (hint.move.move === "roll") { keep = keep.map(function (_, i) { return hint.move.keep.indexOf(i) >= 0; }); return roll(); }
    return send(hint.move);
  }
  function agentStep() {
    timer = null;
    if (!S || S.over || S.human_to_move || busy) return;
    request("POST", "/api/games/" + S.id + "/agent").then(took, function () { paused = true; render(); });
  }
  function schedule() {
    if (timer !== null || !S || S.over || S.human_to_move || paused || busy) return;
    timer = setTimeout(agentStep, Number($("speed").value));
  }
  function open(id) { return request("GET", "/api/games/" + id).then(function (s) { $("hint-coach").removeAttribute("data-set"); took(s); }, function () {}); }
  function savedText(ruleset, seed, players, scores, over, steps) {
    return ruleset + ", seed " + seed + ": " + players.join(" vs ") + " " + (scores ? scores.join(" : ") : "") +
      (over ? "" : " (" + steps + " moves, unfinished)") + " ";
  }
  function updateSaved() {  // the entry of the game on show follows it
    var li = document.querySelector('#savedlist li[data-id="' + S.id + '"]');
    if (!li) return;
    li.firstChild.textContent = savedText(S.ruleset, S.seed, S.seats.map(function (s) { return s.kind === "human" && S.kind === "match" ? "human" : s.name; }),
      S.seats.map(function (s) { return s.score; }), S.over, S.steps);
  }
  function loadSaved() {
    api("GET", "/api/records").then(function (data) {
      var ul = $("savedlist"); ul.textContent = "";
      data.games.forEach(function (g) {
        var li = el("li");
        li.setAttribute("data-id", g.id);
        li.appendChild(el("span", "", savedText(g.ruleset, g.seed, g.players, g.scores, g.over, g.steps)));
        var b = el("button", "open", "open"); b.type = "button"; b.onclick = function () { paused = false; open(g.id); };
        li.appendChild(b);
        if (g.replay) { var a = el("a", "", " replay"); a.href = g.replay; a.target = "_blank"; a.rel = "noopener"; li.appendChild(a); }
        ul.appendChild(li);
      });
    }, function () {});
  }

  // ------------------------------------------------------------------ start
  api("GET", "/api/config").then(function (cfg) {
    CFG = cfg;
    cfg.presets.forEach(function (p) { option($("ruleset"), p, p); });
    $("ruleset").value = cfg.presets.indexOf("classic") >= 0 ? "classic" : cfg.presets[0];
    [$("coach"), $("table-coach"), $("hint-coach")].forEach(function (s) { option(s, "", "(none)"); });
    cfg.agents.forEach(function (a) {
      [$("coach"), $("table-coach"), $("hint-coach"), $("watch-agent")].forEach(function (s) { option(s, a, a); });
    });
    $("coach").value = cfg.default_coach; $("table-coach").value = cfg.default_coach; $("hint-coach").value = cfg.default_coach;
    $("watch-agent").value = cfg.default_coach;
    seatRow("human", "human"); seatRow("agent:" + cfg.default_coach, "");
    loadSaved();
    document.body.setAttribute("data-ready", "1");
    var m = /^#g=([0-9a-f]{16})$/.exec(location.hash);
    if (m) open(m[1]);
  }, function (err) { showError(err.message); });
  $("mode").onchange = setupMode;
  $("add-seat").onclick = function () { if ($("seats").children.length < CFG.max_seats) seatRow("agent:" + CFG.default_coach, ""); };
  $("drop-seat").onclick = function () { var s = $("seats"); if (s.children.length > 2) s.removeChild(s.lastChild); };
  $("newgame").onclick = function () {
    paused = false; hint = null; drawHint();
    request("POST", "/api/games", newGameBody()).then(function (s) { $("hint-coach").removeAttribute("data-set"); took(s); loadSaved(); }, function () {});
  };
  $("roll").onclick = roll;
  $("undo").onclick = undoClick;
  $("hint").onclick = askHint;
  $("playhint").onclick = playHint;
  $("pause").onclick = function () { paused = !paused; render(); };
  $("agent-step").onclick = function () { if (timer !== null) { clearTimeout(timer); timer = null; } agentStep(); };
  $("speed").onchange = function () { if (timer !== null) { clearTimeout(timer); timer = null; } schedule(); };
  $("refresh").onclick = loadSaved;
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
    if (e.key === "r" && S && S.can_roll && !busy) roll();
    else if (e.key === "h" && S && S.human_to_move && !busy) askHint();
    else if (e.key === "p" && S && S.human_to_move && !busy) playHint();
    else if ((e.key === "z" || e.key === "u") && S) undoClick();
  });
})();
</script>
</body>
</html>
"""
PAGE = PAGE_TEMPLATE.replace("@SHEET_JS@", SHEET_JS)
