"""The hub's web server: the console API (and the referees' pages) over HTTP."""
