// The event's public site (hub/web/public_site.py): a static page that polls
// its JSON (data-json) every data-poll seconds and draws it; the round's clock
// runs on this device's clock between polls.  No build step, no libraries.
"use strict";
(function () {
  const body = document.body;
  const url = body.dataset.json, poll = Number(body.dataset.poll || 5) * 1000;
  let doc = null, shown = "", fetched = 0, failing = 0;
  const t = TT_WORDS_OF.t, n = TT_WORDS_OF.n, timeOfDay = TT_WORDS_OF.clock;  // translate.js: the site's words.js
  const statusText = TT_WORDS_OF.status;
  const STATE = {before: t("not started"), running: t("running"), over: t("time up")};

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function dur(ms) {
    if (ms === undefined || ms === null) return "";
    const neg = ms < 0; ms = Math.abs(ms);
    const s = Math.floor(ms / 1000), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
    const out = (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(r).padStart(2, "0");
    return (neg ? "-" : "") + out;
  }
  function clock(v) {
    const now = Date.now();
    if (v.start === null || v.start === undefined || now < v.start)
      return v.start ? t("starts in {time}", {time: dur(v.start - now)}) : t("not started");
    if (v.end !== null && v.end !== undefined && now >= v.end) return t("time up");
    return t("running") + " · " + (v.end ? t("{time} left", {time: dur(v.end - now)}) : dur(now - v.start));
  }
  function standingsTable(rows, withTable) {
    const table = el("table", {id: "standings"});
    const head = el("tr");
    const heads = ["#", t("name"), t("status"), t("time"), t("penalty"), t("net"), t("pieces")];
    for (const h of heads.concat(withTable ? [t("table")] : []))
      head.appendChild(el("th", {}, h));
    table.appendChild(el("thead")).appendChild(head);
    const tb = table.appendChild(el("tbody", {id: "rows"}));
    for (const r of rows) {
      const tr = el("tr", {"data-entrant": r.entrant, class: r.award ? "award" + r.award : ""});
      tr.appendChild(el("td", {class: "num place"}, r.place || "-"));
      const name = el("td", {class: "name"}, r.name);
      if (r.members && r.members.length) name.appendChild(el("div", {class: "members"}, r.members.join(", ")));
      tr.appendChild(name);
      const st = el("td", {class: "status"}, statusText(r.status));
      if (r.provisional) st.appendChild(el("span", {class: "prov"}, t("provisional")));
      tr.appendChild(st);
      tr.appendChild(el("td", {class: "num time"}, dur(r.time_ms)));
      tr.appendChild(el("td", {class: "num"}, r.penalty_ms ? "+" + dur(r.penalty_ms) : ""));
      tr.appendChild(el("td", {class: "num net"}, dur(r.net_ms)));
      tr.appendChild(el("td", {class: "num"}, r.pieces || ""));
      if (withTable) tr.appendChild(el("td", {}, r.table || ""));
      tb.appendChild(tr);
    }
    return table;
  }
  function drawRound(v) {
    document.getElementById("title").textContent = v.title;
    document.title = v.title;
    const main = document.getElementById("main");
    main.replaceChildren();
    const nav = el("p");
    const res = el("a", {href: v.round + "-results.html"}, t("results sheet"));
    nav.append(el("a", {href: "../index.html"}, t("all rounds")), " · ", res);
    main.appendChild(nav);
    main.appendChild(el("p", {id: "summary"},
      t("{count} finished", {count: v.finished}) + " · " + t("{count} solving", {count: v.solving}) +
      (v.provisional ? " · " + t("provisional") : "")));
    main.appendChild(standingsTable(v.rows, true));
  }
  function drawEvent(e) {
    document.getElementById("title").textContent = e.title;
    const main = document.getElementById("main");
    main.replaceChildren();
    for (const r of e.rounds) {
      const s = el("section", {class: "round", "data-round": r.name});
      const h = s.appendChild(el("h2"));
      h.appendChild(el("a", {href: r.standings}, r.name === e.live ? t("{round} (live)", {round: r.name}) : r.name));
      s.appendChild(el("p", {class: "round-state"}, r.category + " · " + (STATE[r.state] || r.state) + " · " +
        t("{count} finished", {count: r.finished}) + (r.provisional ? " · " + t("provisional") : "")));
      if (r.podium.length) s.appendChild(standingsTable(r.podium, false));
      s.appendChild(el("a", {href: r.results}, t("results sheet")));
      main.appendChild(s);
    }
  }
  function tick() {
    const state = document.getElementById("state"), link = document.getElementById("link");
    if (doc && body.dataset.page === "round") state.textContent = clock(doc);
    else if (doc) state.textContent = n("{count} round", "{count} rounds", doc.rounds.length);
    const age = fetched ? Math.round((Date.now() - fetched) / 1000) : null;
    link.textContent = failing >= 2 ? t("this page cannot reach the results now (last read {seconds} s ago)",
                                        {seconds: age}) : "";
  }
  async function load() {
    try {
      const r = await fetch(url + "?v=" + Date.now(), {cache: "no-store"});
      if (!r.ok) throw new Error(String(r.status));
      const d = await r.json();
      failing = 0; fetched = Date.now();
      const text = JSON.stringify(d);
      if (text !== shown) {
        doc = d; shown = text;
        (body.dataset.page === "round" ? drawRound : drawEvent)(d);
        document.getElementById("updated").textContent =
          d.changed_ms ? timeOfDay(d.changed_ms) : "-";
      }
    } catch (err) {
      failing += 1;
    }
    tick();
  }
  load();
  setInterval(load, poll);
  setInterval(tick, 1000);
})();
