"""Pages rendered as a browser does: headless Chromium (skipped without it,
except under CI=true), and the QR codes of a rendered page decoded by
zbarimg.  Plain helpers (not a conftest): ``from rendering import ...``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from needs import require_tool
from tabletimer.tools.testing.browser import HEADLESS_ARGS


def chromium_or_skip() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK)
                                       else None)
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (.ci/run installs it: apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return exe


def run_chromium(exe: str, profile: Path, *args: str, timeout: float = 60) -> bytes:
    """One headless Chromium run in its own process group; whatever of it is
    left (renderer, zygote) is killed by group id afterwards."""
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio", *HEADLESS_ARGS,
           f"--user-data-dir={profile}", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"chromium did not finish within {timeout} s: {' '.join(cmd)}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    return out


def qr_codes_of_page(page: Path, work: Path, window: str = "1240,1754") -> list[str]:
    """The texts of the QR codes on an HTML page as Chromium draws it (a
    screenshot of the window's size), decoded by zbarimg (zbar-tools; .ci/run
    installs it), sorted."""
    zbarimg = require_tool("zbarimg", "apt-get install zbar-tools")
    exe = chromium_or_skip()
    png = work / (page.stem + ".png")
    run_chromium(exe, work / "profile", f"--screenshot={png}", f"--window-size={window}",
                 page.resolve().as_uri())
    out = subprocess.run([zbarimg, "-q", "--raw", str(png)], capture_output=True, text=True, timeout=60)
    return sorted(out.stdout.split("\n")[:-1] if out.stdout else [])
