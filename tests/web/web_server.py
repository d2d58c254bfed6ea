"""The hub's web server for the browser tests: start_hub_web on a free
127.0.0.1 port with the referees' and the hall's pages as its extra routes,
and their credentials for its reserve of connections (as serve.py)."""
from __future__ import annotations

from tabletimer.hub.web.console_api import console_token, folder_event
from tabletimer.hub.web.server import WebServer, start_hub_web


def serve(svc, routes, folder, privileged=(), **limits) -> WebServer:
    """limits: start_hub_web's (max_connections, per_address, reserved, ...)."""
    return start_hub_web(svc, folder_event(folder), console_token(folder), "127.0.0.1", 0, routes,
                         privileged=privileged, **limits)
