"""Who holds a port the hub's broker cannot listen on (issue #32, 4): a hub
of ours named by its pid and event folder, another program by its pid, and
a holder out of sight with how to find it; from /proc, and from lsof and ps
(macOS's way, tried here where lsof is installed)."""

from __future__ import annotations

import os
import shutil
import socket

import pytest

from brokers import free_port
from tabletimer.hub.broker import port_holder
from tabletimer.hub.broker.port_holder import port_taken_advice
from tabletimer.hub.event.folder.folder_lock import HubLock


@pytest.fixture(params=["proc", "lsof"])
def way(request, monkeypatch):
    if request.param == "lsof":
        if shutil.which("lsof") is None:
            pytest.skip("lsof is not installed")
        monkeypatch.setattr(port_holder, "_linux", lambda: False)
    elif not port_holder._linux():
        pytest.skip("no /proc/net/tcp here")
    return request.param


def _listening() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_a_hub_of_ours_is_named_with_its_pid_and_folder(tmp_path, way):
    with HubLock(tmp_path / "events.sqlite"), _listening() as s:
        port = s.getsockname()[1]
        holder = port_holder.port_holder(port)
        said = port_taken_advice("127.0.0.1", port, "Address already in use")
    assert holder is not None and holder.hub_pid == os.getpid() and holder.pid == os.getpid()
    assert holder.folder is not None and holder.folder.resolve() == tmp_path.resolve()
    assert f"another TableTimer hub holds it: pid {os.getpid()}, event folder {holder.folder}" in said
    assert f"kill {os.getpid()}" in said and "systemctl" not in said


def test_another_program_is_named_and_the_system_mosquitto_hinted(tmp_path, way):
    with _listening() as s:
        port = s.getsockname()[1]
        holder = port_holder.port_holder(port)
        said = port_taken_advice("127.0.0.1", port, "Address already in use")
    assert holder is not None and holder.pid == os.getpid() and holder.hub_pid is None
    assert f"pid {os.getpid()} ({holder.name}) holds it, not a TableTimer hub" in said
    assert "sudo systemctl disable --now mosquitto" in said and f"--broker mqtt://127.0.0.1:{port}" in said


def test_a_holder_out_of_sight_is_said_with_how_to_find_it(way):
    port = free_port()            # nobody listens there: as a holder this user cannot see
    assert port_holder.port_holder(port) is None
    said = port_taken_advice("127.0.0.1", port, "Address already in use")
    assert "another program holds it" in said
    assert f"`sudo ss -ltnp 'sport = :{port}'` or `sudo lsof -i :{port}`" in said
    assert "sudo systemctl disable --now mosquitto" in said
