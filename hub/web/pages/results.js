"use strict";
// The results sheet reloads itself when the hub stores a change: a row newer
// than the one the sheet was made at (data-row), including one stored while
// the page was still connecting its stream.  An older view (a cached one) is
// no change: the sheet is newer already.
(function () {
  var made = Number(document.getElementById("live-bar").getAttribute("data-row"));
  TT.stream("/h/api/stream" + TT.hallQuery(), function (v) {
    if (v.row > made) location.reload();
  }, "/h/api/standings" + TT.hallQuery());
})();
