// What the referees' pages share: the hub's clock, the live stream of the
// state, and the queue of actions not sent yet (kept in the phone's local
// storage, each with its idempotency key: sent again until the hub answers,
// stored by the hub exactly once).
"use strict";
var TT = (function () {
  var QUEUE = "tt-queue-v1";
  var offset = 0;               // hub ms - this phone's ms
  var handlers = { view: null, answer: null };
  var live = false, sending = false;

  function now() { return Date.now() + offset; }

  // the page's language (translate.js, loaded before this script: its t() and n())
  var W = TT_WORDS_OF, t = W.t, n = W.n;
  // the chooser of a referee's phone: its choice kept in a cookie (the hub reads it) and reloaded
  document.addEventListener("DOMContentLoaded", function () {
    var c = document.getElementById("lang");
    if (!c) return;
    c.addEventListener("change", function () {
      document.cookie = "tt_lang=" + encodeURIComponent(c.value) + "; path=/; max-age=31536000; samesite=lax";
      try { localStorage.setItem("tt-lang", c.value); } catch (e) { /* private mode: the cookie is enough */ }
      var q = new URLSearchParams(location.search);
      q.delete("lang");
      location.search = q.toString();
      if (!q.toString()) location.reload();
    });
  });

  var clock = W.clock;

  function fmt(ms, res) {
    if (ms === null || ms === undefined) return "-";
    var neg = ms < 0; ms = Math.abs(ms);
    res = res || 1000;
    var t = Math.floor(ms / res) * res;
    var s = Math.floor(t / 1000), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60;
    var out = (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(s % 60).padStart(2, "0");
    var digits = res >= 1000 ? 0 : res >= 100 ? 1 : res >= 10 ? 2 : 3;
    if (digits) out += W.decimal + String(t % 1000).padStart(3, "0").slice(0, digits);
    return (neg ? "-" : "") + out;
  }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
      else if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false) e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }

  function key() {
    var a = new Uint8Array(12);
    (window.crypto || window.msCrypto).getRandomValues(a);
    return "web-" + Array.prototype.map.call(a, function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }

  function load() {
    try { return JSON.parse(localStorage.getItem(QUEUE) || "[]"); } catch (e) { return []; }
  }
  function save(q) { localStorage.setItem(QUEUE, JSON.stringify(q)); showQueue(); }

  function showQueue() {
    var box = document.getElementById("queue");
    if (!box) return;
    var q = load();
    box.hidden = q.length === 0;
    box.textContent = q.length ? n("{count} action not sent yet: {actions} (sent when the connection returns)",
                                   "{count} actions not sent yet: {actions} (sent when the connection returns)",
                                   q.length, { actions: q.map(function (i) { return i.label; }).join("; ") }) : "";
  }

  function setLink(ok, text) {
    live = ok;
    var l = document.getElementById("link");
    if (!l) return;
    l.className = "link " + (ok ? "live" : "down");
    l.textContent = text;
  }

  // an action: queued first (so a lost connection loses nothing), then sent
  function act(item) {
    item.request = item.request || key();
    item.made = item.made || now();
    var q = load();
    q.push(item);
    save(q);
    flush();
    return item.request;
  }

  function drop(request) { save(load().filter(function (i) { return i.request !== request; })); }

  function flush() {
    if (sending) return;
    var q = load();
    if (!q.length) return;
    sending = true;
    var item = q[0];
    var body = { action: item.action, payload: item.payload, why: item.why || "", request: item.request,
                 seen: item.seen === undefined ? null : item.seen, replace: !!item.replace, table: item.table || null };
    fetch("/r/api/act", { method: "POST", credentials: "same-origin",
                          headers: { "Content-Type": "application/json", "X-TableTimer": "1" },
                          body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (sj) {
        sending = false;
        var status = sj[0], j = sj[1];
        if (status === 503) { setLink(false, t("the hub cannot write its log: kept here, sent again soon")); return; }
        drop(item.request);
        if (handlers.answer) handlers.answer(item, status, j);
        if (j && j.view && handlers.view) handlers.view(j.view);
        flush();
      })
      .catch(function () {
        sending = false;
        setLink(false, t("no connection to the hub: actions are kept on this phone"));
        showQueue();
      });
  }

  // the hub sends a view at every change and a ping every 3 s: nothing for
  // LOST_MS means the hub (or the WiFi) is gone, whatever the socket says
  var LOST_MS = 8000;
  var heard = 0, source = null, streamUrl = null, ended = false;
  // a stream the hub refuses (503: the hall's live places are taken) leaves
  // the hall's pages polling pollUrl every POLL_MS, and trying the stream
  // again every RETRY_MS: a slower page, never a blank one
  var POLL_MS = 5000, RETRY_MS = 30000;
  var pollUrl = null, polling = null, tried = 0, notice = "";

  function clockText(ms) {
    return clock(ms - offset);
  }

  function lostText() {
    return t("no connection to the hub since {time}: what this page shows may be out of date; trying again…",
             { time: clockText(heard + offset) });
  }

  function say(ok, text) { setLink(ok, notice ? text + " · " + notice : text); }

  function shown(v) {
    heard = Date.now();
    offset = v.now - Date.now();
    handlers.view(v);
  }

  function open() {
    if (ended) return;
    if (source) source.close();
    tried = Date.now();
    source = new EventSource(streamUrl, { withCredentials: true });
    source.onmessage = function (m) {
      var v = JSON.parse(m.data);
      if (polling) { clearInterval(polling); polling = null; }
      say(true, t("live"));
      shown(v);
      flush();
    };
    source.addEventListener("ping", function (m) {
      heard = Date.now();
      offset = parseInt(m.data, 10) - Date.now();
      if (!live) say(true, t("live"));
    });
    source.addEventListener("revoked", function (m) {     // the badge was revoked: signed out
      ended = true;
      source.close();
      setLink(false, JSON.parse(m.data));
    });
    source.onerror = function () {
      if (ended) return;
      // CLOSED: the hub answered, but not with a stream (503, 403); otherwise the
      // browser is reconnecting by itself (the hub or the WiFi gone)
      if (pollUrl && source.readyState === EventSource.CLOSED) { poll(); return; }
      if (heard) setLink(false, lostText());
    };
  }

  function withoutScreen(url) {
    return url.replace(/([?&])screen=[^&]*&?/, "$1").replace(/[?&]$/, "");
  }

  function poll() {
    if (!polling) polling = setInterval(poll, POLL_MS);
    if (Date.now() - tried > RETRY_MS) { open(); return; }     // the stream again, while still polling
    fetch(pollUrl, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (sj) {
        var status = sj[0], j = sj[1];
        if (status === 200) {
          say(true, t("every {seconds} s (the live places are taken: trying again)", { seconds: POLL_MS / 1000 }));
          shown(j);
        } else if (status === 403 && j && j.screen === "refused") {
          notice = j.error;                       // a wrong screen token: a spectator's page
          pollUrl = withoutScreen(pollUrl);
          streamUrl = withoutScreen(streamUrl);
          open();
        } else if (heard) {
          setLink(false, lostText());
        }
      })
      .catch(function () { if (heard) setLink(false, lostText()); });
  }

  // url: the stream; poll: (the hall's pages) what to ask every few seconds
  // when the stream is refused
  function stream(url, onView, poll) {
    handlers.view = onView;
    streamUrl = url;
    pollUrl = poll || null;
    heard = Date.now();
    open();
    var reopened = 0;
    setInterval(function () {
      if (!ended && Date.now() - heard > LOST_MS) {
        setLink(false, lostText());
        if (Date.now() - reopened > 3000) {
          reopened = Date.now();
          open();                     // a new connection (a silent one may never end by itself)
        }
      }
    }, 1000);
  }

  // what of this page's address its calls to the hall's data carry, as a query to add: the
  // screen token (?screen=...) and the round it shows (?round=NAME: a page stays on its round)
  function hallQuery(sep) {
    var q = new URLSearchParams(location.search), t = q.get("screen"), r = q.get("round"), out = [];
    if (t) out.push("screen=" + encodeURIComponent(t));
    if (r !== null) out.push("round=" + encodeURIComponent(r));
    return out.length ? (sep || "?") + out.join("&") : "";
  }

  // a hall view's armed start still ahead (nobody solving yet), and an entrant's status as shown:
  // once the start has come the waiting are solving, before the next view says so
  function armed(view) { return view.start !== null && now() < view.start; }
  // a status as the hall's pages show it, in the page's language (translate.js)
  var statusText = W.status;
  function shownStatus(view, r) { return r.status === "waiting" && view.start !== null && !armed(view) ? "solving" : r.status; }

  // a source round's live marks for the round it feeds (hall_view's rows' advance and its
  // advance_to): a row's badge, and the legend saying what each means
  var ADVANCE = { certain: t("advances"), "in": t("in the places"), out: t("out") };
  function advanceBadge(r) {
    return r.advance ? el("span", { "class": "badge adv adv-" + r.advance, text: ADVANCE[r.advance] || r.advance }) : null;
  }
  // what "unofficial" means (hall_view's unofficial: sheet_legend.unofficial_parts), as the sheet says it
  function unofficialText(u) {
    var text = t("not eligible for an award place: takes part and is ranked all the same.");
    if (u.eligibility) {
      text += " " + t("Who is eligible for awards: {who}", { who: u.eligibility });
      if (u.members) {
        var kind = t(u.kind);
        text += " " + (u.all ? t("({kind}: all its members)", { kind: kind })
                             : n("({kind}: at least one of its members)", "({kind}: at least {count} of its members)",
                                 u.members, { kind: kind }));
      }
      text += ".";
    }
    return text;
  }
  function legend(view) {
    var out = view.unofficial ? [t("unofficial") + ": " + unofficialText(view.unofficial)] : [];
    if (view.advance_to && view.rows.some(function (r) { return r.advance; }))
      out.push(t("advances: certain to go on to {round}", { round: view.advance_to }),
               t("in the places: in the qualifying places now, not yet certain"),
               t("out: can no longer reach {round}", { round: view.advance_to }));
    return out.join(" · ");
  }

  window.addEventListener("online", flush);
  setInterval(flush, 3000);
  document.addEventListener("DOMContentLoaded", showQueue);

  return { now: now, fmt: fmt, clock: clock, t: t, n: n, lang: W.lang, el: el, act: act, flush: flush, stream: stream, queue: load, hallQuery: hallQuery,
           armed: armed, shownStatus: shownStatus, statusText: statusText, advanceBadge: advanceBadge, legend: legend,
           onAnswer: function (fn) { handlers.answer = fn; }, isLive: function () { return live; } };
})();
