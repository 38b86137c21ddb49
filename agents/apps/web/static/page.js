/* jamb-web's page (agents/apps/web/static/index.html): it talks JSON to the server's API and
   draws only what the server sends (the engine's sheet, dice, legal moves, scores, the
   bonus's figures), with sheet.js; no rule is restated here. Every name and text from the
   server is set with textContent (or as a data- attribute), never parsed as HTML. */
(function () {
  "use strict";
  var CFG = null, S = null, keep = [], clicks = [], diceKey = "", hint = null, timer = null, paused = false, busy = false;
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
    var bonus = el("tr", "bonusrow"); bonus.appendChild(el("td", "rowname", "bonus at " + S.bonus_at));
    sheet.parts.forEach(function (p) {
      var reached = p[1] > 0;
      bonus.appendChild(el("td", reached ? "reached" : "", reached ? "+" + p[1] : p[0] + "/" + S.bonus_at));
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
        if (g.error) { li.appendChild(el("span", "broken", g.id + ": " + g.error)); ul.appendChild(li); return; }
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
