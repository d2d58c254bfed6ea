"use strict";
// The standings on a spectator's phone: search by name, follow one entrant
// (kept at the top, remembered on this phone).
(function () {
  var t = TT.t, n = TT.n;
  var view = null, el = TT.el, FOLLOW = "tt-follow", wasArmed = false;
  var follow = localStorage.getItem(FOLLOW);
  var search = document.getElementById("search");

  function res() { return view ? view.resolution_ms : 1000; }
  // an armed start still ahead: nobody is solving yet; once it has come, the waiting are solving
  function armed() { return TT.armed(view); }
  function status(r) { return TT.shownStatus(view, r); }
  // a pieces-ranked round (most pieces, ties by the earlier last whole puzzle) ranks by pieces
  function pieces() { return view.order === "pieces"; }
  function text(r) {
    var st = status(r);
    if (pieces() && (st === "finished" || st === "unfinished"))
      return t("{count} pcs", { count: r.pieces }) +
        (view.tie_break !== "none" && r.time_ms ? " · " + t("last whole puzzle {time}", { time: TT.fmt(r.time_ms, res()) }) : "") +
        (r.deducted ? " (−" + r.deducted + ")" : "");
    if (st === "finished") return TT.fmt(r.net_ms, res()) + (r.penalty_ms ? " (+" + TT.fmt(r.penalty_ms, 1000) + ")" : "");
    if (st === "solving") return t("solving");
    if (st === "unfinished") return t("{count} pcs", { count: r.pieces });
    return TT.statusText(st);
  }

  function item(r) {
    var f = r.entrant === follow;
    return el("li", { "class": (f ? "followed " : "") + (r.award ? "award" + r.award : ""), "data-entrant": r.entrant }, [
      el("span", { "class": "place", text: r.place == null ? "" : String(r.place) }),
      el("span", { "class": "who" }, [r.name,
        // official is false for an entrant who may not take an award place (explained below the list)
        r.official ? null : el("span", { "class": "badge unofficial", text: t("unofficial") }),
        TT.advanceBadge(r),   // certain, in the places, out: for the round this one feeds
        r.members ? el("div", { "class": "members", text: r.members.join(", ") }) : null]),
      el("span", { "class": "res status-" + status(r) }, [text(r),
        r.provisional && status(r) !== "solving" && status(r) !== "waiting" ? el("span", { "class": "prov", text: " *" }) : null]),
      el("button", { "aria-label": f ? t("stop following {name}", { name: r.name }) : t("follow {name}", { name: r.name }), "class": "follow", text: f ? "★" : "☆",
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
    summary(q ? rows.length : null);
    document.getElementById("legend").textContent = TT.legend(view);
  }

  function summary(found) {
    var s = document.getElementById("summary"), more = found === null ? "" : " · " + t("{count} found", { count: found });
    if (armed()) {
      s.textContent = t("starts in {time}", { time: TT.fmt(view.start - TT.now(), 1000) }) + " · " +
        n("{count} entrant", "{count} entrants", view.rows.length) + more;
      return;
    }
    var solving = view.rows.filter(function (r) { return status(r) === "solving"; }).length;
    s.textContent = (pieces() ? t("{count} ranked", { count: view.ranked }) : t("{count} finished", { count: view.finished })) +
      " · " + t("{count} solving", { count: solving }) + more;
  }

  function clock() {
    if (!view) return;
    var now = TT.now(), c = document.getElementById("clock");
    if (view.start === null) c.textContent = t("not started");
    else if (now < view.start) c.textContent = t("starts in {time}", { time: TT.fmt(view.start - now, 1000) });
    else if (view.end !== null && now >= view.end) c.textContent = t("time up");
    else c.textContent = TT.fmt(now - view.start, 1000);
    // "starts in" counts down; at the start the waiting become solving without waiting for the next view
    if (armed() || wasArmed) { wasArmed = armed(); draw(); }
  }

  search.addEventListener("input", draw);
  TT.stream("/h/api/stream" + TT.hallQuery(), function (v) { view = v; draw(); clock(); },
            "/h/api/standings" + TT.hallQuery());
  setInterval(clock, 500);
})();
