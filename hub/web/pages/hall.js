"use strict";
// The projector: the round clock, the next signal, and the standings in
// pages that turn by themselves (as many rows as the screen holds).
(function () {
  var view = null, page = 0, turned = Date.now();
  var PAGE_MS = 10000;
  var el = TT.el, t = TT.t, n = TT.n;

  function res() { return view ? view.resolution_ms : 1000; }
  // the signals' kinds as the hall hears them
  var KINDS = { start: t("start"), end: t("end"), warning: t("warning"), warn: t("warning"), round_start: t("round start"),
                round_end: t("round end"), time_up: t("time up") };
  function kind(k) { return KINDS[k] || String(k).replace(/_/g, " "); }

  function clock() {
    if (!view) return;
    var now = TT.now(), c = document.getElementById("clock"), nx = document.getElementById("next");
    if (view.start === null) c.textContent = t("not started");
    else if (now < view.start) c.textContent = t("starts in {time}", { time: TT.fmt(view.start - now, 1000) });
    else if (view.end !== null && now >= view.end) c.textContent = t("time up");
    else c.textContent = TT.fmt(now - view.start, 1000) + (view.end ? " · " + t("{time} left", { time: TT.fmt(view.end - now, 1000) }) : "");
    var s = view.next_signal;
    nx.textContent = s && s.at > now ? t("next: {signal} in {time}", { signal: kind(s.kind), time: TT.fmt(s.at - now, 1000) }) : "";
    summary();
  }

  // an armed start still ahead: nobody is solving yet ("waiting"); once it has come, the
  // waiting are solving (the view that says so follows within seconds)
  function armed() { return TT.armed(view); }
  function status(r) { return TT.shownStatus(view, r); }

  function summary() {
    var s = document.getElementById("summary");
    if (armed()) {
      s.textContent = t("starts in {time}", { time: TT.fmt(view.start - TT.now(), 1000) }) + " · " +
        n("{count} entrant", "{count} entrants", view.rows.length);
      return;
    }
    var solving = view.rows.filter(function (r) { return status(r) === "solving"; }).length;
    // a pieces-ranked round counts those ranked (by their pieces), not those who finished every puzzle
    s.textContent = (pieces() ? t("{count} ranked", { count: view.ranked }) : t("{count} finished", { count: view.finished })) +
      " · " + t("{count} solving", { count: solving }) + " · " + n("{count} entrant", "{count} entrants", view.rows.length) +
      (view.official ? " · " + t("official results") : view.provisional ? " · * " + t("provisional") : "");
  }

  // the columns after name, table (and part): a time-ranked format's time, penalty and net; a
  // pieces-ranked one's pieces, its tie-break (the last whole puzzle's time) and deductions
  function pieces() { return view.order === "pieces"; }
  function heads() {
    if (!pieces()) return [t("time"), t("penalty"), t("net")];
    return [t("pieces")].concat(view.tie_break !== "none" ? [t("last whole puzzle")] : [])
      .concat(view.rows.some(function (r) { return r.deducted; }) ? [t("deducted")] : []);
  }

  function result(r) {
    r = Object.assign({}, r, { status: status(r) });
    if (pieces()) {
      if (r.status !== "finished" && r.status !== "unfinished") return [r.status === "solving" && r.pieces ? t("solving, {count} pcs", { count: r.pieces }) : TT.statusText(r.status), "", ""];
      var out = [String(r.pieces)];
      if (view.tie_break !== "none") out.push(r.time_ms ? TT.fmt(r.time_ms, res()) : "–");
      if (heads().length > out.length) out.push(r.deducted ? "−" + r.deducted : "");
      return out;
    }
    if (r.status === "finished") return [TT.fmt(r.time_ms, res()), r.penalty_ms ? "+" + TT.fmt(r.penalty_ms, 1000) : "",
                                         TT.fmt(r.net_ms, res())];
    if (r.status === "solving") return [t("solving"), "", r.pieces ? t("{count} pcs", { count: r.pieces }) : ""];
    if (r.status === "unfinished") return [t("unfinished"), "", t("{count} pcs", { count: r.pieces })];
    return [TT.statusText(r.status), "", ""];
  }

  var rowH = 40;             // measured once rows are drawn
  function perPage() {
    var body = document.getElementById("rows");
    var foot = document.querySelector("footer").getBoundingClientRect().height;
    return Math.max(5, Math.floor((window.innerHeight - body.getBoundingClientRect().top - foot - 8) / rowH));
  }

  function draw() {
    if (!view) return;
    document.getElementById("title").textContent = view.title;
    document.getElementById("category").textContent = view.category;
    var parts = view.rows.some(function (r) { return r.part; });
    var nums = heads(), head = ["#", t("name"), t("table")].concat(parts ? [t("part")] : []).concat(nums);
    document.getElementById("head").replaceChildren.apply(document.getElementById("head"),
      head.map(function (h) { return el("th", { "class": nums.indexOf(h) >= 0 ? "num" : "", text: h }); }));
    var n = perPage(), pages = Math.max(1, Math.ceil(view.rows.length / n));
    if (Date.now() - turned > PAGE_MS) { page = (page + 1) % pages; turned = Date.now(); }
    if (page >= pages) page = 0;
    var tbody = document.getElementById("rows");
    tbody.replaceChildren();
    view.rows.slice(page * n, page * n + n).forEach(function (r) {
      var rr = result(r), st = status(r);
      var cells = [el("td", { "class": "num", text: r.place == null ? "" : String(r.place) }),
                   el("td", { "class": "name" }, [r.name,
                     // official is left out of a line when false: an entrant who may not take an award place
                     r.official ? null : el("span", { "class": "badge unofficial", text: t("unofficial") }),
                     TT.advanceBadge(r),   // certain, in the places, out: for the round this one feeds
                     r.members ? el("div", { "class": "members", text: r.members.join(", ") }) : null]),
                   el("td", { text: r.table || "" })];
      if (parts) cells.push(el("td", { text: r.part || "" }));
      nums.forEach(function (h, i) {
        var last = i === nums.length - 1;
        cells.push(el("td", { "class": "num" + (i === 0 ? " status-" + st : "") }, [rr[i] || "",
          last && r.provisional && st !== "solving" && st !== "waiting" ? el("span", { "class": "prov", title: t("provisional"), text: " *" }) : null]));
      });
      tbody.appendChild(el("tr", { "class": r.award ? "award" + r.award : "", "data-entrant": r.entrant }, cells));
    });
    var first = tbody.firstElementChild;
    if (first && Math.abs(first.getBoundingClientRect().height - rowH) > 0.5) {
      rowH = first.getBoundingClientRect().height;      // the screen's own row height: draw again
      return draw();
    }
    summary();
    document.getElementById("legend").textContent = TT.legend(view);
    document.getElementById("page").textContent = pages > 1 ? t("page {page} / {pages}", { page: page + 1, pages: pages }) : "";
    document.getElementById("changed").textContent = view.changed_ms ?
      t("last change {time}", { time: TT.clock(view.changed_ms - (view.now - TT.now())) }) : "";
  }

  // with the screen token of its address (?screen=...): a stream of the screens' own, never the crowd's;
  // with its ?round=NAME: that round's
  TT.stream("/h/api/stream" + TT.hallQuery(), function (v) { view = v; draw(); clock(); },
            "/h/api/standings" + TT.hallQuery());
  setInterval(clock, 250);
  setInterval(function () { if (Date.now() - turned > PAGE_MS) draw(); }, 500);
})();
