"use strict";
(function () {
  var view = null;
  function tablePath(t) { return "/t/" + encodeURIComponent(t); }
  function draw() {
    if (!view) return;
    var ol = document.getElementById("calls");
    ol.replaceChildren();
    view.calls.forEach(function (c) {
      ol.appendChild(TT.el("li", { "data-press": c.press_id }, [
        TT.el("a", { href: c.table ? tablePath(c.table) : "#" }, [
          TT.el("span", {}, [TT.el("b", { text: c.table || "by hand" }), " ",
                             TT.el("span", { text: c.name + (c.button ? " (#" + c.button + ")" : "") })]),
          TT.el("span", { "class": "wait", text: TT.fmt(TT.now() - c.at) }),
          TT.el("span", { "class": "press-id", text: c.short || "" })])]));
    });
    document.getElementById("nocalls").hidden = view.calls.length > 0;
    // every conflict until someone resolves it (a decision on it, or the desk's resolve)
    var cl = document.getElementById("conflicts"), open = view.conflicts || [];
    cl.replaceChildren();
    open.forEach(function (c) { cl.appendChild(TT.el("li", { "data-row": String(c.row), text: c.text })); });
    cl.hidden = open.length === 0;
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
