// The door's check-in page (hub/web/check_in_view.py): find an entrant by
// name, table or id (what a scanner types, or ?entrant=ID from a badge's QR
// code), mark present, undo; "34 of 41 checked in". Each tap is an action
// through the hub's checks (kept on the phone while the connection is gone).
"use strict";
(function () {
  var view = null;
  var wanted = new URLSearchParams(location.search).get("entrant");
  var search = document.getElementById("search");
  if (wanted) search.value = wanted;

  function say(text, error) {
    var m = document.getElementById("message");
    m.hidden = !text;
    m.className = "message" + (error ? " error" : "");
    m.textContent = text || "";
  }

  function fold(t) { return (t || "").toLowerCase().normalize("NFD").replace(/[\u0300-\u036f]/g, ""); }

  // an entrant's id typed whole (a scanner, a QR code's ?entrant=) finds that one
  // entrant; otherwise every word must be part of the name, a member, the table or the id
  function matches(e, q) {
    if (!q) return true;
    if (e.id === q.trim()) return true;
    var hay = fold([e.name, e.members.join(" "), e.table, e.id].join(" "));
    return fold(q).split(/\s+/).every(function (w) { return hay.indexOf(w) >= 0; });
  }

  function mark(e, present) {
    var label = present ? TT.t("check in {name}", { name: e.name }) : TT.t("undo the check-in of {name}", { name: e.name });
    TT.act({ action: "check_in", payload: { entrant: e.id, present: present ? 1 : 0 },
             why: present ? "" : "undone at the door", label: label });
    say(present ? TT.t("checking in {name}…", { name: e.name }) : TT.t("undoing {name}…", { name: e.name }));
  }

  function row(e) {
    var state = e.out ? e.out.toUpperCase() : e.present ? TT.t("here") : TT.t("not here");
    var buttons = [];
    if (!e.out && !e.present) {
      buttons.push(TT.el("button", { "class": "primary", "data-act": "in", text: TT.t("Present"),
                                     onclick: function () { mark(e, true); } }));
    } else if (e.present && e.by) {
      buttons.push(TT.el("button", { "class": "danger", "data-act": "undo", text: TT.t("Undo"),
                                     onclick: function () { mark(e, false); } }));
    }
    var by = e.present && e.by ? TT.t("checked in by {name}", { name: e.by }) : "";
    return TT.el("li", { "data-entrant": e.id, "class": "entrant" + (e.present ? " here" : "") }, [
      TT.el("div", { "class": "who-is" }, [
        TT.el("b", { text: e.name }), " ",
        TT.el("span", { "class": "table", text: e.reserve ? TT.t("reserve (no station)") : e.table }),
        e.members.length ? TT.el("div", { "class": "members", text: e.members.join(", ") }) : null,
        TT.el("div", { "class": "state-line" }, [
          TT.el("span", { "class": "state " + (e.present ? "running" : ""), text: state }),
          by ? " " + by : ""])]),
      TT.el("div", { "class": "actions" }, buttons)]);
  }

  function draw() {
    if (!view) return;
    document.getElementById("count").textContent =
      TT.n("{count} of {expected} checked in", "{count} of {expected} checked in", view.present, { expected: view.expected }) +
      (view.reserves_here ? " " + TT.n("(and {count} reserve here)", "(and {count} reserves here)", view.reserves_here) : "");
    var q = search.value, ol = document.getElementById("entrants");
    var shown = view.entrants.filter(function (e) { return matches(e, q); });
    ol.replaceChildren();
    shown.forEach(function (e) { ol.appendChild(row(e)); });
    document.getElementById("none").hidden = shown.length > 0;
  }

  search.addEventListener("input", draw);
  TT.onAnswer(function (item, status, j) {
    var who = view ? (view.entrants.find(function (e) { return e.id === item.payload.entrant; }) || {}).name ||
      item.payload.entrant : item.payload.entrant;
    if (status === 200) say(item.payload.present ? TT.t("checked in: {name}", { name: who }) : TT.t("undone: {name}", { name: who }));
    else say(j && j.error ? j.error : TT.t("refused ({status})", { status: status }), true);
  });
  TT.stream("/r/api/stream?page=checkin", function (v) { view = v; draw(); });
})();
