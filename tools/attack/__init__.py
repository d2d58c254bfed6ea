"""Attacks on a hub as a host on the hall network without a login would try
them, to measure what the hub holds (docs/operations.md, "Run a hall
securely", has the figures and the commands): `connect_flood` (a broker's
idle TCP connections, issue #33 item 1), `web_flood` (the web server's and
the hall's pages' connections and streams, items 2 and 3)."""
