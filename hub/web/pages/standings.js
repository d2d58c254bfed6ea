"use strict";
// The standings on a spectator's phone: search by name, follow one entrant
// (kept at the top, remembered on this phone).
(function () {
  var view = null, el = TT.el, FOLLOW = "tt-follow";
  var follow = localStorage.getItem(FOLLOW);
  var search = document.getElementById("search");

  function res() { return view ? view.resolution_ms : 1000; }
  function text(r) {
    if (r.status === "finished") return TT.fmt(r.net_ms, res()) + (r.penalty_ms ? " (+" + TT.fmt(r.penalty_ms, 1000) + ")" : "");
    if (r.status === "solving") return "solving";
    if (r.status === "unfinished") return r.pieces + " pcs";
    return r.status;
  }

  function item(r) {
    var f = r.entrant === follow;
    return el("li", { "class": (f ? "followed " : "") + (r.award ? "award" + r.award : ""), "data-entrant": r.entrant }, [
      el("span", { "class": "place", text: r.place == null ? "" : String(r.place) }),
      el("span", { "class": "who" }, [r.name, r.members ? el("div", { "class": "members", text: r.members.join(", ") }) : null]),
      el("span", { "class": "res status-" + r.status }, [text(r), r.provisional && r.status !== "solving" ? el("span", { "class": "prov", text: " *" }) : null]),
      el("button", { "aria-label": (f ? "stop following " : "follow ") + r.name, "class": "follow", text: f ? "★" : "☆",
                     onclick: function () {
                       follow = f ? null : r.entrant;
                       if (follow) localStorage.setItem(FOLLOW, follow); else localStorage.removeItem(FOLLOW);
                       draw();
                     } })]);
  }

  function draw() {
    if (!view) return;
    document.getElementById("title").textContent = view.title;
    document.getElementById("category").textContent = view.category;
    var q = search.value.trim().toLowerCase();
    var rows = view.rows.filter(function (r) {
      return !q || r.name.toLowerCase().indexOf(q) >= 0 || (r.members || []).some(function (m) { return m.toLowerCase().indexOf(q) >= 0; });
    });
    var mine = view.rows.filter(function (r) { return r.entrant === follow; });
    var ol = document.getElementById("rows");
    ol.replaceChildren();
    mine.forEach(function (r) { ol.appendChild(item(r)); });
    rows.forEach(function (r) { if (r.entrant !== follow) ol.appendChild(item(r)); });
    document.getElementById("summary").textContent = view.finished + " finished · " + view.solving + " solving" +
      (q ? " · " + rows.length + " found" : "");
  }

  function clock() {
    if (!view) return;
    var now = TT.now(), c = document.getElementById("clock");
    if (view.start === null) c.textContent = "not started";
    else if (now < view.start) c.textContent = "starts in " + TT.fmt(view.start - now, 1000);
    else if (view.end !== null && now >= view.end) c.textContent = "time up";
    else c.textContent = TT.fmt(now - view.start, 1000);
  }

  search.addEventListener("input", draw);
  TT.stream("/h/api/stream" + TT.hallQuery(), function (v) { view = v; draw(); clock(); },
            "/h/api/standings" + TT.hallQuery());
  setInterval(clock, 500);
})();
