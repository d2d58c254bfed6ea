"use strict";
// Several categories on one screen: each category's projector page (its
// hub's /hall) in a frame of its own, all of them live, shown in turn.
//   /rotate?screens=/hall,http://192.168.1.21:8766/hall?screen=T2&every=20&screen=T1
// (screen=T1: this hub's screen token, given to its own frames; another hub's
// frame carries its own token)
(function () {
  var q = new URLSearchParams(location.search);
  var every = Math.max(5, parseFloat(q.get("every")) || 20) * 1000;
  var screens = (q.get("screens") || "/hall").split(",").map(function (s) { return s.trim(); })
    .filter(function (s) { return /^\/[^\/]/.test(s) || /^https?:\/\/[^\s]+$/i.test(s); });
  if (!screens.length) { document.getElementById("help").hidden = false; return; }
  var token = q.get("screen");        // this hub's screen token: for its own frames (/hall)
  var frames = screens.map(function (src) {
    if (token && src.charAt(0) === "/" && !/[?&]screen=/.test(src))
      src += (src.indexOf("?") < 0 ? "?" : "&") + "screen=" + encodeURIComponent(token);
    var f = document.createElement("iframe");
    f.src = src;
    f.title = src;
    document.body.appendChild(f);
    return f;
  });
  var shown = 0, dots = document.getElementById("dots");
  function show() {
    frames.forEach(function (f, i) { f.className = i === shown ? "on" : ""; });
    dots.textContent = frames.length > 1 ? frames.map(function (f, i) { return i === shown ? "●" : "○"; }).join(" ") : "";
  }
  show();
  if (frames.length > 1) setInterval(function () { shown = (shown + 1) % frames.length; show(); }, every);
})();
