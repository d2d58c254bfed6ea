"""The hub keeps its laptop awake while it runs (issue 44, item 1;
hub/runtime/keep_awake.py): on Linux through logind's inhibitor lock
(`systemd-inhibit`), on macOS through `caffeinate` watching the hub's pid.
logind cannot run in this container (no systemd as pid 1), so the lock's
holder is a stand-in `systemd-inhibit` on PATH that records how it was
asked and runs the command it was given, as the real one does; the rest is
real: the holder's process, the pipe that ends it with the hub, a killed
hub included, and what the hub says where it cannot be kept awake."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tabletimer.hub.runtime import keep_awake as ka
from waiting import until


def stand_in(folder: Path) -> Path:
    """A `systemd-inhibit` that writes its arguments and pid, then runs the
    command after its options (as logind's holds the lock while it runs)."""
    folder.mkdir()
    tool = folder / "systemd-inhibit"
    tool.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" > {folder}/args
        echo $$ > {folder}/pid
        while [ "${{1#--}}" != "$1" ]; do shift; done
        exec "$@"
        """))
    tool.chmod(0o755)
    return folder


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_the_lock_is_asked_for_sleep_idle_and_the_lid_and_held_until_released(tmp_path, monkeypatch):
    tools = stand_in(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    awake = ka.keep_awake("linux")
    try:
        assert awake.proc is not None and awake.said.startswith("the laptop is kept awake"), awake.said
        args = (tools / "args").read_text().split()
        assert "--what=sleep:idle:handle-lid-switch" in args and "--mode=block" in args and args[-1] == "cat"
        pid = int((tools / "pid").read_text())
        assert alive(pid)
    finally:
        awake.release()
    until(lambda: not alive(pid), "the lock's holder to end once released")


def test_a_killed_hub_lets_go_of_the_lock(tmp_path):
    """SIGKILL leaves no time to release anything: the holder reads a pipe
    only the hub held, and ends when the hub's end of it closes."""
    tools = stand_in(tmp_path / "bin")
    env = dict(os.environ, PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    code = ("import os, signal; from tabletimer.hub.runtime.keep_awake import keep_awake; "
            "a = keep_awake('linux'); print(a.said, flush=True); os.kill(os.getpid(), signal.SIGKILL)")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == -9 and "kept awake" in r.stdout, (r.stdout, r.stderr)
    pid = int((tools / "pid").read_text())
    until(lambda: not alive(pid), "the lock's holder to end with the killed hub")


def test_where_the_laptop_cannot_be_kept_awake_the_hub_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))           # neither tool on it
    for platform, tool in (("linux", "systemd-inhibit"), ("darwin", "caffeinate")):
        said = ka.keep_awake(platform).said
        assert said.startswith(f"warning: cannot keep this laptop awake ({tool} not found)"), said
        assert "turn automatic sleep off" in said
    # a tool that is there but refuses (logind not running): its own words
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "systemd-inhibit").write_text("#!/bin/sh\necho 'Failed to connect to bus: No such file' >&2\nexit 1\n")
    (tools / "systemd-inhibit").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    said = ka.keep_awake("linux").said
    assert "(systemd-inhibit: Failed to connect to bus: No such file)" in said, said


def test_on_macos_caffeinate_watches_the_hubs_pid(tmp_path, monkeypatch):
    (tmp_path / "caffeinate").write_text("#!/bin/sh\n")
    (tmp_path / "caffeinate").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ka.command("darwin", 4242) == [str(tmp_path / "caffeinate"), "-i", "-s", "-w", "4242"]
