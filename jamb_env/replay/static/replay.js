/* The replay page (jamb_env/replay/html.py): the game's steps from the JSON block #data,
   drawn one at a time with sheet.js; buttons and the arrow keys, Home and End move. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var S = D.steps, n = S.length - 1, k = 0;
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
