// The pages' gettext: the page's catalogue (/r/words/LANG.js, /h/words/LANG.js, or the public
// site's words.js, each made by the hub from its gettext catalogues: hub/i18n/catalogue.py)
// sets TT_WORDS; t() and n() are gettext and ngettext, with {name} placeholders; clock() a time
// of day as the language writes it; status() an entrant's status.  Loaded before the page's own
// script (common.js, site.js).
"use strict";
var TT_WORDS_OF = (function () {
  var W = window.TT_WORDS || { lang: "en", plural: function (n) { return n !== 1 ? 1 : 0; }, decimal: ".", messages: {} };
  function fill(text, values) {
    return text.replace(/\{([a-z_][a-z0-9_]*)\}/g, function (m, k) {
      return values && values[k] !== undefined && values[k] !== null ? String(values[k]) : m;
    });
  }
  function t(text, values) {
    var m = W.messages[text];
    return fill(typeof m === "string" ? m : text, values);
  }
  function n(singular, plural, count, values) {
    var forms = W.messages[singular], v = Object.assign({ count: count }, values || {});
    if (Array.isArray(forms)) return fill(forms[Math.min(W.plural(count), forms.length - 1)], v);
    return fill(count === 1 ? singular : plural, v);
  }
  // a clock time as the page's language writes it (the hub's English: 14:05:09)
  function clock(ms) {
    return new Date(ms).toLocaleTimeString(W.lang === "en" ? "en-GB" : W.lang,
                                           { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }
  // an entrant's status as the pages say it (DNS, DQ as they are)
  var STATUS = { finished: t("finished"), solving: t("solving"), unfinished: t("unfinished"), waiting: t("waiting") };
  function status(st) { return STATUS[st] || st; }
  return { t: t, n: n, clock: clock, status: status, lang: W.lang, decimal: W.decimal };
})();
