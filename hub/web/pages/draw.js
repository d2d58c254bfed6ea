"use strict";
// The team draw for the hall (the projector, a phone): the round's latest
// draw (its number, the seed: the same number gives the same teams) and each
// team with its members; the draws it superseded listed. Asked for every few
// seconds: a draw made again shows within them.
(function () {
  var EVERY = 3000, el = TT.el, shown = null, failed = 0;

  function clock(ms) {
    return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }

  function how(d) {
    var out = d.registered + " registered, " + d.teams.length + " teams of " + d.size;
    if (d.apart_by) out += "; " + d.apart_by + " kept apart";
    if (d.balance_by) out += "; balanced by the places of round " + d.balance_by;
    return out;
  }

  function render(v) {
    document.getElementById("title").textContent = v.title;
    document.title = "Team draw - " + v.title;
    var drawn = document.getElementById("drawn"), teams = document.getElementById("teams"),
        old = document.getElementById("superseded"), d = v.latest;
    drawn.textContent = ""; teams.textContent = ""; old.textContent = "";
    document.getElementById("state").textContent = v.started ? "the round has started: its teams are fixed" : "";
    if (!d) {
      drawn.appendChild(el("div", { "class": "none", id: "none", text: "No team draw recorded for this round yet." }));
      return;
    }
    drawn.appendChild(el("span", { text: v.draws > 1 ? "Draw " + d.n + " (drawn again), number" : "Draw number" }));
    drawn.appendChild(el("span", { "class": "number", id: "seed", text: String(d.seed) }));
    drawn.appendChild(el("span", { id: "how", text: how(d) + " · at " + clock(d.at_ms) }));
    d.teams.forEach(function (t) {
      teams.appendChild(el("section", { "class": "team", "data-team": t.id }, [
        el("h2", { text: t.name }),
        el("ol", {}, t.members.map(function (m) { return el("li", { text: m }); }))]));
    });
    if (v.superseded.length) {
      old.appendChild(el("span", { text: "Superseded: " }));
      v.superseded.forEach(function (s, i) {
        old.appendChild(el("span", { "class": "old", "data-n": s.n,
          text: (i ? " · " : "") + "draw " + s.n + " (number " + s.seed + ", " + clock(s.at_ms) + ")" }));
      });
    }
    document.getElementById("changed").textContent = "updated " + clock(Date.now());
  }

  function link(ok, why) {
    var l = document.getElementById("link");
    l.className = "link " + (ok ? "live" : "down");
    l.textContent = ok ? "live" : why;
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
      if (failed >= 2) link(false, "not connected to the hub: " + e.message + " (trying again)");
    }).then(function () { setTimeout(poll, EVERY); });
  }
  poll();
})();
