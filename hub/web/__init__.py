"""The hub's web layer: pages for referees' phones and the hall, and the remote-console API."""
