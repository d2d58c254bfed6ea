"use strict";
(function () {
  var view = null;
  function tablePath(t) { return "/t/" + encodeURIComponent(t); }
  // while a hall check runs (none: no hall_check, the section hidden): what the
  // person walking the tables still has to do, table by table
  function drawCheck(hc) {
    document.getElementById("hallcheck").hidden = !hc;
    if (!hc) return;
    document.getElementById("hallcheck-progress").textContent =
      TT.t("Hall check: {ready}/{boards} boards ready, {pressed}/{buttons} buttons pressed",
           { ready: hc.boards_ready, boards: hc.boards, pressed: hc.pressed, buttons: hc.buttons });
    var ul = document.getElementById("hallcheck-todo");
    ul.replaceChildren();
    hc.todo.forEach(function (t) {
      var items = t.buttons.map(function (b) {
        return TT.el("li", { "class": "button", "data-button": t.board + ":" + b.button,
                             text: TT.t("button {button} ({name}): not pressed yet", { button: b.button, name: b.name }) });
      }).concat(t.problems.map(function (p) {
        return TT.el("li", { "class": "problem", text: TT.t("board {board}", { board: t.board }) + ": " + p });
      }));
      ul.appendChild(TT.el("li", { "data-table": t.table, "data-board": t.board }, [
        TT.el("b", { text: t.table }), " ", TT.el("span", { "class": "board", text: TT.t("board {board}", { board: t.board }) }),
        TT.el("ul", {}, items)]));
    });
    document.getElementById("hallcheck-done").hidden = hc.todo.length > 0;
  }
  function draw() {
    if (!view) return;
    drawCheck(view.hall_check);
    var ol = document.getElementById("calls");
    ol.replaceChildren();
    view.calls.forEach(function (c) {
      ol.appendChild(TT.el("li", { "data-press": c.press_id }, [
        TT.el("a", { href: c.table ? tablePath(c.table) : "#" }, [
          TT.el("span", {}, [TT.el("b", { text: c.table || TT.t("by hand") }), " ",
                             TT.el("span", { text: c.name + (c.button ? " (#" + c.button + ")" : "") })]),
          // how long the call has waited for a referee: said so, not a bare time that reads as one of the day's
          TT.el("span", { "class": "wait", text: TT.t("waiting {time}", { time: TT.fmt(TT.now() - c.at) }) }),
          TT.el("span", { "class": "press-id", text: c.short || "" })])]));
    });
    document.getElementById("nocalls").hidden = view.calls.length > 0;
    // every conflict until someone resolves it (a decision on it, or the desk's resolve)
    var cl = document.getElementById("conflicts"), open = view.conflicts || [];
    cl.replaceChildren();
    open.forEach(function (c) { cl.appendChild(TT.el("li", { "data-row": String(c.row), text: c.text })); });
    cl.hidden = open.length === 0;
    // what happened to the hub's clock (a sleep, a stepped clock, the boards' time taken): said, for 10 min
    var ck = document.getElementById("clock"), said = view.clock || [];
    ck.replaceChildren();
    said.forEach(function (t) { ck.appendChild(TT.el("li", { text: t })); });
    ck.hidden = said.length === 0;
    var site = document.getElementById("site");       // the public site's publishing (run --publish)
    site.textContent = view.site || "";
    site.hidden = !view.site;
    var ul = document.getElementById("tables");
    if (ul.childElementCount !== view.tables.length) {
      ul.replaceChildren();
      view.tables.forEach(function (t) {
        ul.appendChild(TT.el("li", {}, [TT.el("a", { href: tablePath(t), text: t })]));
      });
    }
  }
  TT.stream("/r/api/stream", function (v) { view = v; draw(); });
  setInterval(draw, 1000);
})();
