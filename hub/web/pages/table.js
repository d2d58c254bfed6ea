"use strict";
(function () {
  var TABLE = document.body.dataset.table;
  var view = null;
  var drafts = {};          // station key -> what the referee typed, kept across redraws
  var drawn = {};           // station key -> the JSON it was last drawn from
  var el = TT.el, t = TT.t, n = TT.n;
  var STATES = { running: t("running"), idle: t("idle"), done: t("done"), stopped: t("stopped") };

  function skey(s) { return s.board + ":" + s.button; }
  function draft(s) { return drafts[skey(s)] || (drafts[skey(s)] = { missing: {}, arm: null }); }
  function res() { return view.format.resolution_ms; }

  function message(text, error) {
    var m = document.getElementById("message");
    m.hidden = !text; m.textContent = text || ""; m.className = "message" + (error ? " error" : "");
  }

  // what a decision decides: a call (confirm, void) or a puzzle's count; one
  // decision on it waits in the queue at a time (a second tap is no second
  // decision: its button is disabled until the hub has answered)
  function subject(action, payload) {
    if (action === "confirm" || action === "void") return "call:" + payload.press_id;
    if (action === "count") return "count:" + payload.entrant + ":" + (payload.puzzle || 1);
    return null;
  }
  function pending(what) {
    return what !== null && TT.queue().some(function (i) { return subject(i.action, i.payload) === what; });
  }

  function send(s, action, payload, label, extra) {
    var item = { action: action, payload: payload, table: TABLE, label: label + " (" + s.name + ")" };
    for (var k in extra || {}) item[k] = extra[k];
    var d = draft(s); d.arm = null;
    if (pending(subject(action, payload))) {
      message(action === "count" ? t("already waiting to be sent: a decision on this count")
                                 : t("already waiting to be sent: a decision on this call"));
      return;
    }
    TT.act(item);
    message(TT.isLive() ? t("sending: {action}", { action: item.label })
                        : t("kept on this phone, not sent yet: {action}", { action: item.label }));
    redrawAll();                  // its buttons: disabled
  }

  function waiting(button) {      // a decision of this card is queued: no second one
    button.disabled = true;
    button.textContent += " " + t("(waiting to be sent)");
    return button;
  }

  var mine = {};             // log row -> what this phone stored there (told when it is overridden)
  var toldOverride = {};

  TT.onAnswer(function (item, status, j) {
    redrawAll();                  // its buttons: enabled again
    if (status === 200 && j.row) mine[j.row.id] = item.label;
    if (status === 200) {
      message(j.duplicate ? t("already stored: {action} (row #{row})", { action: item.label, row: j.row.id })
                          : t("stored: {action} (row #{row})", { action: item.label, row: j.row.id }));
      if (item.action === "confirm" || item.action === "count") {
        for (var k in drafts) { drafts[k].missing = {}; drafts[k].entry = ""; }
      }
    } else if (status === 409) {
      showConflict(item, j);
    } else {
      message(j.error || t("the hub answered {status}", { status: status }), true);
    }
  });

  function showConflict(item, j) {
    var box = document.getElementById("conflict");
    box.replaceChildren(
      el("b", { text: t("Conflict:") + " " }), el("span", { "class": "text", text: j.conflict || j.error }),
      el("p", { text: t("{action} was not recorded.", { action: item.label }) }),
      el("div", { "class": "actions" }, [
        el("button", { "class": "danger", text: t("Record mine anyway"), onclick: function () {
          box.hidden = true;
          if (pending(subject(item.action, item.payload))) return;
          TT.act({ action: item.action, payload: item.payload, why: item.why, table: TABLE,
                   label: item.label, replace: true });
        } }),
        el("button", { text: t("Keep the hub's"), onclick: function () { box.hidden = true; message(""); } })]));
    box.hidden = false;
    message("");
  }

  function penaltyText(s, d) {
    var f = view.format, counted = 0;
    f.missing.forEach(function (c) { if (c.penalised) counted += (d.missing[c.field] || 0); });
    if (f.missing_action === "subtract") return counted ? n("{count} piece deducted", "{count} pieces deducted", counted)
                                                        : t("no pieces deducted");
    var pen = counted * f.penalty_ms;
    return t("penalty +{penalty} · net {net}", { penalty: TT.fmt(pen, 1000), net: TT.fmt(s.time_ms + pen, res()) });
  }

  function stepper(s, d, c, onchange) {
    var input = el("input", { type: "number", inputmode: "numeric", min: "0", max: String(s.pieces || 100000),
                              value: String(d.missing[c.field] || 0), "class": "num", name: c.field,
                              "aria-label": t(c.label) });
    function set(v) { d.missing[c.field] = Math.max(0, v | 0); input.value = String(d.missing[c.field]); onchange(); }
    input.addEventListener("input", function () { d.missing[c.field] = Math.max(0, parseInt(input.value || "0", 10) || 0); onchange(); });
    return el("div", { "class": "row" }, [el("label", { text: t(c.label) }),
      el("div", { "class": "stepper" }, [
        el("button", { text: "−", "aria-label": t("fewer {what}", { what: t(c.label) }), onclick: function () { set((d.missing[c.field] || 0) - 1); } }),
        input,
        el("button", { text: "+", "aria-label": t("more {what}", { what: t(c.label) }), onclick: function () { set((d.missing[c.field] || 0) + 1); } })])]);
  }

  function armed(s, d, what, label, cls, go) {
    // a two-tap button for what cannot be taken back at the table
    if (d.arm === what) {
      return el("button", { "class": cls || "danger", text: t("Tap again: {action}", { action: label }), "data-act": what, onclick: go });
    }
    return el("button", { "class": "danger", text: label, "data-act": what + "-arm",
                          onclick: function () { d.arm = what; redraw(s, true); } });
  }

  function called(s, d, card) {
    card.appendChild(el("div", { "class": "hint", text: t("Recorded time: show it to the competitor") }));
    card.appendChild(el("div", { "class": "recorded", text: TT.fmt(s.time_ms, res()) }));
    card.appendChild(el("div", { "class": "hint wait", "data-since": String(s.call_at) }));
    if (s.call_short) card.appendChild(el("div", { "class": "hint press-id", text: t("press {id}", { id: s.call_short }) }));
    var ab = s.at_board;
    if (ab && ab.missing) {
      // the referee's count at the board: what its confirming hold records (said by its blips too)
      card.appendChild(el("div", { "class": "hint board-count", text: t(
        "counted at the board: {missing} missing; the board's confirm (hold 2 s) records {result}",
        { missing: ab.missing, result: penaltyText(s, { missing: { missing_found: ab.missing } }) }) }));
    }
    if (ab && ab.repeats) {
      card.appendChild(el("div", { "class": "hint repeats", text: t(
        "pressed again {count}× since the call: repeat calls, no missing piece", { count: ab.repeats }) }));
    }
    var pv = el("div", { "class": "preview" });
    function update() { pv.textContent = penaltyText(s, d); }
    view.format.missing.forEach(function (c) { card.appendChild(stepper(s, d, c, update)); });
    update();
    card.appendChild(pv);
    var reason = el("input", { type: "text", placeholder: t("why void (required)"), name: "reason",
                               value: d.reason || "", "class": "reason" });
    reason.addEventListener("input", function () { d.reason = reason.value; });
    var buttons = [el("button", { "class": "primary", text: t("Confirm"), "data-act": "confirm", onclick: function () {
      var p = { press_id: s.call };
      view.format.missing.forEach(function (c) { p[c.field] = d.missing[c.field] || 0; });
      send(s, "confirm", p, t("confirm {time}", { time: TT.fmt(s.time_ms, res()) }), { seen: "open" });
    } })];
    buttons.push(armed(s, d, "void", t("Void the call"), "danger", function () {
      if (!(d.reason || "").trim()) { message(t("say why the call is void first"), true); d.arm = null; redraw(s, true); return; }
      send(s, "void", { press_id: s.call }, t("void the call"), { seen: "open", why: d.reason.trim() });
    }));
    if (pending(subject("confirm", { press_id: s.call }))) buttons = buttons.map(waiting);
    card.appendChild(el("div", { "class": "actions" }, buttons));
    card.appendChild(el("div", { "class": "row" }, [reason]));
  }

  function running(s, d, card) {
    card.appendChild(el("div", { "class": "clock", "data-from": String(s.start_ms) }));
    var acts = [];
    if (view.format.start_offsets) {
      acts.push(armed(s, d, "restart", t("New start time now (taped bag)"), "danger", function () {
        send(s, "start_offset", { entrant: s.entrant, offset_ms: TT.now() - view.start }, t("new start time"));
      }));
    }
    if (view.format.chosen && view.format.puzzles.length > 1 && s.puzzle) {
      view.format.puzzles.forEach(function (_n, i) {
        var other = i + 1;
        if (other === s.puzzle) return;
        acts.push(armed(s, d, "swap" + other, t("Pack {packed}, open {opened}", { packed: s.puzzle, opened: other }), "danger", function () {
          send(s, "swap", { entrant: s.entrant, at: TT.now(), packed: s.puzzle, opened: other },
               t("swap puzzle {packed} for {opened}", { packed: s.puzzle, opened: other }));
        }));
      });
    }
    acts.push(dns(s, d));
    card.appendChild(el("div", { "class": "actions" }, acts));
  }

  function dns(s, d) {
    return armed(s, d, "dns", t("Did not start (DNS)"), "danger", function () {
      send(s, "dns", { entrant: s.entrant }, t("DNS"));
    });
  }

  function countForm(s, d, card) {
    var f = view.format, what = f.count_entry, words = f.count_words;
    card.appendChild(el("div", { "class": "hint", text: t(words.hint, { g: words.g }) + " " +
      t("(puzzle {puzzle}, {pieces} pieces)", { puzzle: s.puzzle, pieces: s.pieces }) }));
    if (s.count) {
      card.appendChild(el("div", { "class": "preview", text: s.count.placed !== null
        ? t("recorded: {count} placed", { count: s.count.placed }) : t("recorded: {count} remaining", { count: s.count.remaining }) }));
    }
    var input = el("input", { type: "number", inputmode: "numeric", min: "0", max: String(s.pieces), name: "entry",
                              "class": "num", value: d.entry || "", "aria-label": t(words.label, { g: words.g }) });
    input.addEventListener("input", function () { d.entry = input.value; });
    card.appendChild(el("div", { "class": "row" }, [el("label", { text: t(words.label, { g: words.g }) }), input]));
    if (what === "remaining") {
      var piles = el("input", { type: "number", inputmode: "numeric", min: "0", "class": "num", name: "piles",
                                value: d.piles || "", "aria-label": t("piles of 10") });
      var loose = el("input", { type: "number", inputmode: "numeric", min: "0", max: "9", "class": "num", name: "loose",
                                value: d.loose || "", "aria-label": t("loose pieces") });
      function fill() {
        d.piles = piles.value; d.loose = loose.value;
        input.value = d.entry = String((parseInt(piles.value || "0", 10) || 0) * 10 + (parseInt(loose.value || "0", 10) || 0));
      }
      piles.addEventListener("input", fill); loose.addEventListener("input", fill);
      card.appendChild(el("div", { "class": "row" }, [el("label", { text: t("piles of 10") }), piles,
                                                       el("label", { text: t("+ loose") }), loose]));
    }
    var record = el("button", { "class": "primary", text: t("Record count"), "data-act": "count", onclick: function () {
        var n = parseInt(d.entry || "", 10);
        if (isNaN(n)) { message(what === "placed" ? t("enter the number of pieces placed")
                                                   : t("enter the number of pieces remaining"), true); return; }
        var p = { entrant: s.entrant, puzzle: s.puzzle }; p[what] = n;
        send(s, "count", p, what === "placed" ? t("count {count} placed", { count: n }) : t("count {count} remaining", { count: n }),
             { seen: s.count || null });
      } });
    if (pending(subject("count", { entrant: s.entrant, puzzle: s.puzzle }))) waiting(record);
    card.appendChild(el("div", { "class": "actions" }, [record]));
  }

  // a confirmed finish as the standings reckon it: its penalty and net time, or the pieces deducted
  function resultText(r) {
    if (!r) return "";
    if (view.format.missing_action === "subtract")
      return r.deducted ? " · " + n("{count} piece deducted", "{count} pieces deducted", r.deducted) : "";
    return (r.penalty_ms ? " · " + t("penalty +{penalty}", { penalty: TT.fmt(r.penalty_ms, 1000) }) : "") + " · " +
      t("net {net}", { net: TT.fmt(r.net_ms, res()) });
  }

  function card(s) {
    var d = draft(s);
    var c = el("section", { "class": "station", "data-station": skey(s), "data-state": s.state }, [
      el("h2", { text: s.name }),
      s.members.length ? el("div", { "class": "members", text: s.members.join(", ") }) : null,
      el("div", {}, [el("span", { "class": "state " + s.state,
                                  text: s.state === "stopped" ? (s.reason === "time up" ? t("time up") : s.reason.toUpperCase())
                                        : s.state === "called" ? t("CALL") : STATES[s.state] || s.state }),
                     " ", el("span", { "class": "hint", text: t("button {button}", { button: s.button }) +
                                       (s.puzzle ? " · " + t("puzzle {puzzle}", { puzzle: s.puzzle }) +
                                        (s.pieces ? " (" + s.pieces + ")" : "") : "") })])]);
    if (s.overridden) c.appendChild(el("div", { "class": "hint overridden", text: s.overridden.text }));
    if (s.state === "called") called(s, d, c);
    else if (s.state === "running") running(s, d, c);
    else if (s.state === "idle") { c.appendChild(el("p", { text: t("waiting for the round's start") }));
                                   c.appendChild(el("div", { "class": "actions" }, [dns(s, d)])); }
    else if (s.state === "done") { c.appendChild(el("p", { "class": "preview", text: t("confirmed: {time}", { time: TT.fmt(s.time_ms, res()) }) +
                                                           (s.missing ? " " + t("({count} missing)", { count: s.missing }) : "") +
                                                           resultText(s.result) }));
                                   if (s.done_call) agreement(s, c, "agree", { press_id: s.done_call }, s.agreed, "time"); }
    else if (s.state === "stopped" && s.reason === "time up") {
      countForm(s, d, c);
      if (s.count) agreement(s, c, "agree-count", { entrant: s.entrant, puzzle: s.puzzle }, s.count_agreed, "count");
    }
    if (view.official) c.appendChild(el("p", { "class": "hint official", text: t("the results are official") }));
    return c;
  }

  // the competitor saw the recorded time (or count) and agreed: one tap, logged with the referee's name
  function agreement(s, c, act, payload, agreed, what) {
    if (agreed) { c.appendChild(el("p", { "class": "agreed", "data-agreed": "1", text: t("competitor agreed") })); return; }
    if (view.official) return;
    var b = el("button", { "class": "primary", "data-act": act, onclick: function () {
        send(s, "agree", payload, what === "time" ? t("competitor agreed to the time") : t("competitor agreed to the count"));
      } });
    b.textContent = what === "time" ? t("Competitor agreed to the time") : t("Competitor agreed to the count");
    c.appendChild(el("div", { "class": "actions" }, [b]));
  }

  function redrawAll() { if (view) view.stations.forEach(function (st) { redraw(st, true); }); }

  function redraw(s, force) {
    var k = skey(s), json = JSON.stringify(s);
    var old = document.querySelector('[data-station="' + k + '"]');
    if (!force && old && drawn[k] === json) return;
    drawn[k] = json;
    var fresh = card(s);
    if (old) old.replaceWith(fresh); else document.getElementById("stations").appendChild(fresh);
    tick();
  }

  function tick() {
    if (!view) return;
    document.querySelectorAll("[data-from]").forEach(function (e) {
      e.textContent = TT.fmt(TT.now() - parseInt(e.dataset.from, 10), 1000);
    });
    document.querySelectorAll("[data-since]").forEach(function (e) {
      e.textContent = t("called {time} ago", { time: TT.fmt(TT.now() - parseInt(e.dataset.since, 10), 1000) });
    });
  }

  TT.stream("/r/api/stream?table=" + encodeURIComponent(TABLE), function (v) {
    view = v;
    document.getElementById("title").textContent = v.table;
    v.stations.forEach(function (s) {
      redraw(s);
      var o = s.overridden;
      if (o && mine[o.row] && !toldOverride[o.row]) {       // what this phone stored was replaced
        toldOverride[o.row] = true;
        message(t("your {action} (row #{row}) was replaced: {why}", { action: mine[o.row], row: o.row, why: o.text }), true);
      }
    });
  });
  setInterval(tick, 250);
})();
