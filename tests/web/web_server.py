"""Until the hub's WebServer lands: uvicorn in a thread on a free port."""
from __future__ import annotations

import socket
import threading

import uvicorn
from starlette.applications import Starlette

from waiting import until


class _Server:
    def __init__(self, app) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        until(lambda: self.server.started, "uvicorn started")

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.server.force_exit = True
        self.thread.join(5)


def serve(svc, pages, folder):
    return _Server(Starlette(routes=pages.routes()))
