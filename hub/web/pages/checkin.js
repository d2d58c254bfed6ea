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
    var label = (present ? "check in " : "undo the check-in of ") + e.name;
    TT.act({ action: "check_in", payload: { entrant: e.id, present: present ? 1 : 0 },
             why: present ? "" : "undone at the door", label: label });
    say((present ? "checking in " : "undoing ") + e.name + "…");
  }

  function row(e) {
    var state = e.out ? e.out.toUpperCase() : e.present ? "here" : "not here";
    var buttons = [];
    if (!e.out && !e.present) {
      buttons.push(TT.el("button", { "class": "primary", "data-act": "in", text: "Present",
                                     onclick: function () { mark(e, true); } }));
    } else if (e.present && e.by) {
      buttons.push(TT.el("button", { "class": "danger", "data-act": "undo", text: "Undo",
                                     onclick: function () { mark(e, false); } }));
    }
    var by = e.present && e.by ? "checked in by " + e.by : "";
    return TT.el("li", { "data-entrant": e.id, "class": "entrant" + (e.present ? " here" : "") }, [
      TT.el("div", { "class": "who-is" }, [
        TT.el("b", { text: e.name }), " ",
        TT.el("span", { "class": "table", text: e.reserve ? "reserve (no station)" : e.table }),
        e.members.length ? TT.el("div", { "class": "members", text: e.members.join(", ") }) : null,
        TT.el("div", { "class": "state-line" }, [
          TT.el("span", { "class": "state " + (e.present ? "running" : ""), text: state }),
          by ? " " + by : ""])]),
      TT.el("div", { "class": "actions" }, buttons)]);
  }

  function draw() {
    if (!view) return;
    document.getElementById("count").textContent = view.text +
      (view.reserves_here ? " (and " + view.reserves_here + " reserve" + (view.reserves_here > 1 ? "s" : "") +
       " here)" : "");
    var q = search.value, ol = document.getElementById("entrants");
    var shown = view.entrants.filter(function (e) { return matches(e, q); });
    ol.replaceChildren();
    shown.forEach(function (e) { ol.appendChild(row(e)); });
    document.getElementById("none").hidden = shown.length > 0;
  }

  search.addEventListener("input", draw);
  TT.onAnswer(function (item, status, j) {
    if (status === 200) say((item.payload.present ? "checked in: " : "undone: ") +
                            (view ? (view.entrants.find(function (e) { return e.id === item.payload.entrant; }) || {}).name || item.payload.entrant : item.payload.entrant));
    else say(j && j.error ? j.error : "refused (" + status + ")", true);
  });
  TT.stream("/r/api/stream?page=checkin", function (v) { view = v; draw(); });
})();
