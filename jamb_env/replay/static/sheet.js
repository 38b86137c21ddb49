/* The sheet drawing both Jamb pages share: the replay page (jamb_env/replay/html.py inlines
   it) and jamb-web's page (served as /static/sheet.js). It draws what the data says, from
   jamb_env.render.sheet.sheet_view: no rule is restated here, and every text is set with
   textContent, never parsed as HTML.

   el(tag, cls, text)        a new element, text set with textContent
   pips(box, face)           the nine pip slots of a die face 1-6 appended to box
   sheetTable(t, layout, sheet, hook)
       fills the <table> t: a header of layout.columns; per row of layout.rows a td.rowname
       and one td.cell per column with its state as class ("written" / "open" show the
       value, "announce" shows "a") and the title "column/row: state"; then the score parts
       (layout.parts; tr.part, the first also "first") and tr.total. sheet.cells holds rows
       x columns of [state, value], the state as its name or its index in
       layout.cell_states (an unknown state is drawn "closed"); sheet.parts per column the
       parts' values; sheet.totals column -> total. hook(td, r, c, state, cell), when given,
       is called on each cell before it is added.
   extraTotals(layout, sheet) "name value" strings of the totals that are not a column of
       layout (the board's extra scores, e.g. a 003 sheet's) */
var PIPS = {1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8]};
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function pips(box, face) {
  for (var i = 0; i < 9; i++) box.appendChild(el("span", PIPS[face] && PIPS[face].indexOf(i) >= 0 ? "pip" : ""));
}
function sheetTable(t, layout, sheet, hook) {
  var states = layout.cell_states;
  t.textContent = "";
  var head = el("tr"); head.appendChild(el("th", "", ""));
  layout.columns.forEach(function (c) { head.appendChild(el("th", "", c)); });
  t.appendChild(head);
  layout.rows.forEach(function (row, r) {
    var tr = el("tr"); tr.appendChild(el("td", "rowname", row));
    layout.columns.forEach(function (col, c) {
      var cell = sheet.cells[r][c];
      var st = typeof cell[0] === "number" ? states[cell[0]] : cell[0];
      if (states.indexOf(st) < 0) st = "closed";
      var text = st === "written" || st === "open" ? cell[1] : st === "announce" ? "a" : "";
      var td = el("td", "cell " + st, text);
      td.title = col + "/" + row + ": " + st;
      if (hook) hook(td, r, c, st, cell);
      tr.appendChild(td);
    });
    t.appendChild(tr);
  });
  layout.parts.forEach(function (name, i) {
    var tr = el("tr", "part" + (i === 0 ? " first" : "")); tr.appendChild(el("td", "rowname", name));
    sheet.parts.forEach(function (p) { tr.appendChild(el("td", "", p[i])); });
    t.appendChild(tr);
  });
  var tot = el("tr", "total"); tot.appendChild(el("td", "rowname", "total"));
  layout.columns.forEach(function (c) { tot.appendChild(el("td", "", sheet.totals[c])); });
  t.appendChild(tot);
}
function extraTotals(layout, sheet) {
  return Object.keys(sheet.totals).filter(function (c) { return layout.columns.indexOf(c) < 0; })
    .map(function (c) { return c + " " + sheet.totals[c]; });
}
