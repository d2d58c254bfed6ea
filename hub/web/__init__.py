"""The hub's web layer: one server (server.py) for the remote-console API and the referees' pages."""
