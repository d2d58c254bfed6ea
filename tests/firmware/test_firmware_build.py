"""Every file that runs on a board compiles with MicroPython's mpy-cross."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabletimer.hub.fleet import firmware_build


@pytest.mark.parametrize("src", firmware_build.board_sources(include_host_only=True),
                         ids=lambda p: p.name)
def test_compiles_with_mpy_cross(src: Path, tmp_path: Path) -> None:
    out = firmware_build.compile_file(src, tmp_path)
    data = out.read_bytes()
    assert data[:1] == b"M" and len(data) > 16   # an .mpy header, not an empty file


def test_board_file_set(tmp_path: Path) -> None:
    names = {p.name for p in firmware_build.build(tmp_path)}
    assert "main.py" in names and "app.mpy" in names and "protocol.mpy" in names
    assert "clocksync.mpy" in names and "mqtt_client.mpy" in names
    assert not names & {"sim_main.mpy", "hardware_sim.mpy"}


def test_compile_error_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    with pytest.raises(RuntimeError, match="bad.py"):
        firmware_build.compile_file(bad, tmp_path)
