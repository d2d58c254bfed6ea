"use strict";
// The team draw for the hall (the projector, a phone): the round's latest
// draw (its number, the seed: the same number gives the same teams) and each
// team with its members; the draws it superseded listed. Asked for every few
// seconds: a draw made again shows within them.
(function () {
  var EVERY = 3000, el = TT.el, shown = null, failed = 0, t = TT.t, n = TT.n;

  function clock(ms) { return TT.clock(ms); }

  function how(d) {
    var out = n("{count} registered", "{count} registered", d.registered) + ", " +
      n("{count} team of {size}", "{count} teams of {size}", d.teams.length, { size: d.size });
    if (d.apart_by) out += "; " + t("{column} kept apart", { column: d.apart_by });
    if (d.balance_by) out += "; " + t("balanced by the places of round {round}", { round: d.balance_by });
    return out;
  }

  function render(v) {
    document.getElementById("title").textContent = v.title;
    document.title = t("Team draw") + " - " + v.title;
    var drawn = document.getElementById("drawn"), teams = document.getElementById("teams"),
        old = document.getElementById("superseded"), d = v.latest;
    drawn.textContent = ""; teams.textContent = ""; old.textContent = "";
    document.getElementById("state").textContent = v.started ? t("the round has started: its teams are fixed") : "";
    if (!d) {
      drawn.appendChild(el("div", { "class": "none", id: "none", text: t("No team draw recorded for this round yet.") }));
      return;
    }
    drawn.appendChild(el("span", { text: v.draws > 1 ? t("Draw {n} (drawn again), number", { n: d.n }) : t("Draw number") }));
    drawn.appendChild(el("span", { "class": "number", id: "seed", text: String(d.seed) }));
    drawn.appendChild(el("span", { id: "how", text: how(d) + " · " + t("at {time}", { time: clock(d.at_ms) }) }));
    d.teams.forEach(function (t) {
      teams.appendChild(el("section", { "class": "team", "data-team": t.id }, [
        el("h2", { text: t.name }),
        el("ol", {}, t.members.map(function (m) { return el("li", { text: m }); }))]));
    });
    if (v.superseded.length) {
      old.appendChild(el("span", { text: t("Superseded:") + " " }));
      v.superseded.forEach(function (s, i) {
        old.appendChild(el("span", { "class": "old", "data-n": s.n,
          text: (i ? " · " : "") + t("draw {n} (number {seed}, {time})", { n: s.n, seed: s.seed, time: clock(s.at_ms) }) }));
      });
    }
    document.getElementById("changed").textContent = t("updated {time}", { time: clock(Date.now()) });
  }

  function link(ok, why) {
    var l = document.getElementById("link");
    l.className = "link " + (ok ? "live" : "down");
    l.textContent = ok ? t("live") : why;
  }

  function poll() {
    fetch("/h/api/draw" + TT.hallQuery(), { cache: "no-store" }).then(function (r) {
      return r.json().then(function (v) {
        if (!r.ok) throw new Error(v.error || ("HTTP " + r.status));
        return v;
      });
    }).then(function (v) {
      failed = 0;
      link(true);
      var key = JSON.stringify(v);
      if (key !== shown) { shown = key; render(v); }
    }).catch(function (e) {
      failed += 1;
      if (failed >= 2) link(false, t("not connected to the hub: {error} (trying again)", { error: e.message }));
    }).then(function () { setTimeout(poll, EVERY); });
  }
  poll();
})();
