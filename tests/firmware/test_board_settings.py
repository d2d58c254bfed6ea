"""Issue 29, item 1: settings over the air, on the real firmware (micropython)
and a real hub and broker.  The hub's signed, numbered settings command
(an operator action `settings`, sent as the hub applies it); the board
checks the change as its configuration file at boot (settings_update.py: merge,
config.check), keeps the previous configuration, restarts on the new one
and commits it once its hub is heard; new settings that reach no broker,
or no WiFi (the simulator's access point, hardware_sim.py), go back by the
board itself within the trial's limit, and the next birth says why.  A
power loss at each step of the switch boots a whole configuration."""

from __future__ import annotations

import json

import pytest

from rig import Rig
from tabletimer.hub.broker.broker import free_port
from tabletimer.hub.fleet.simulator import SimBoard


def _log(text: str):
    return lambda r: text in str(r.get("log", ""))


def _files(sim: SimBoard) -> set[str]:
    return {p.name for p in sim.dir.iterdir() if p.name.startswith("config")}


def _config(sim: SimBoard) -> dict:
    return json.loads((sim.dir / "config.json").read_text())


def _board(rig: Rig, name: str, **kw) -> SimBoard:
    sim = rig.board(name, **kw)
    sim.reboots = True               # the chip boots again after machine.reset()
    sim.wait_for(lambda r: "sync" in r, timeout=20)
    return sim


def _answer(rig: Rig, board: str, state: str, request: int) -> dict:
    return rig.wait_event(lambda e: e["type"] == "config" and e["board"] == board
                          and e["payload"]["state"] == state and e["payload"].get("id") == request, timeout=40)


def test_a_change_is_staged_applied_at_the_reboot_and_committed(tmp_path, embedded_broker):
    rig = Rig(tmp_path, embedded_broker)
    try:
        svc = rig.start_hub()
        sim = _board(rig, "S1")
        assert _config(sim)["broker"]["keepalive"] == 10
        row = svc.act("settings", {"board": "S1", "set": {"broker.keepalive": 20, "led": 2}})
        _answer(rig, "S1", "staged", row["id"])
        sim.wait_for(lambda r: r.get("sim") == "reboot", timeout=20)
        sim.wait_for(_log("settings on trial (boot 1 of 3"), timeout=20)
        sim.wait_for(_log("settings committed"), timeout=30)
        _answer(rig, "S1", "committed", row["id"])
        cfg = _config(sim)
        assert cfg["broker"]["keepalive"] == 20 and cfg["led"] == 2 and cfg["key"] == sim.config["key"]
        assert _files(sim) == {"config.json"}          # the previous one and the trial file gone
        # the next boot is an ordinary one, on the new settings
        births = [e for e in svc.store.events() if e["type"] == "status" and e["board"] == "S1"
                  and e["payload"]["state"] == "online"]
        assert len(births) == 2 and not births[-1]["payload"].get("fault"), births
    finally:
        rig.close()


def test_a_bad_value_is_refused_by_the_board_with_its_reason(tmp_path, embedded_broker):
    """A command the hub's own check would refuse, sent signed all the
    same (a hub of another version): the board's config.check and its list
    of keys refuse it with the reason; nothing changes, no restart."""
    rig = Rig(tmp_path, embedded_broker)
    try:
        svc = rig.start_hub()
        sim = _board(rig, "S2", stations=2)        # buttons 1, 2
        before = (sim.dir / "config.json").read_text()
        from tabletimer.hub.protocol import hub_protocol
        out = svc.commands.to_board("S2", "cmd", hub_protocol.settings(7, {"broker.port": 0}), 1)
        svc.state.publish([out])
        refused = rig.wait_event(lambda e: e["type"] == "config" and e["payload"]["state"] == "refused")
        assert refused["payload"]["id"] == 7
        assert "'broker.port' must be 1..65535" in refused["payload"]["why"], refused
        out = svc.commands.to_board("S2", "cmd", hub_protocol.settings(8, {"buttons": [3]}), 1)
        svc.state.publish([out])
        refused = rig.wait_event(lambda e: e["type"] == "config" and e["payload"].get("id") == 8)
        assert "cannot be set over the air" in refused["payload"]["why"], refused
        assert (sim.dir / "config.json").read_text() == before and _files(sim) == {"config.json"}
        assert not any(r.get("sim") == "reboot" for r in sim.records)
    finally:
        rig.close()


def test_the_buzzer_volume_is_applied_at_once_without_a_restart(tmp_path, embedded_broker):
    """A setting that cannot cut a board off its hub (settings_update.AT_ONCE: the
    buzzer's volume) is written and applied at once, answered committed:
    no restart, no trial, no previous configuration kept."""
    rig = Rig(tmp_path, embedded_broker)
    try:
        svc = rig.start_hub()
        sim = SimBoard("S4", rig.broker.host, rig.broker.port, tmp_path, key=rig.keys.ensure("S4"))
        sim.config["buzzer"] = {"pin": 25, "volume": 80}
        rig.boards.append(sim.start())
        sim.wait_for(lambda r: r.get("sim") == "volume", timeout=20)
        assert [r["volume"] for r in sim.records if r.get("sim") == "volume"] == [80]    # at boot
        sim.wait_for(lambda r: "sync" in r, timeout=20)
        mark = len(sim.records)
        row = svc.act("settings", {"board": "S4", "set": {"buzzer.volume": 30}})
        _answer(rig, "S4", "committed", row["id"])
        sim.wait_for(lambda r: r.get("sim") == "volume" and r["volume"] == 30, timeout=10, start=mark)
        assert _config(sim)["buzzer"] == {"pin": 25, "volume": 30} and _files(sim) == {"config.json"}
        answers = [e["payload"]["state"] for e in svc.store.events() if e["type"] == "config"]
        assert answers == ["committed"]
        assert not any(r.get("sim") == "reboot" for r in sim.records)
    finally:
        rig.close()


@pytest.mark.parametrize("what", ["broker", "wifi"])
def test_settings_that_reach_no_hub_are_rolled_back_by_the_board(tmp_path, embedded_broker, what):
    """A broker port nobody listens on; a WiFi password the hall's access
    point refuses: the board tries them for the trial's limit, goes back by
    itself, and its next birth says why (the hub's alert)."""
    rig = Rig(tmp_path, embedded_broker)
    try:
        svc = rig.start_hub()
        sim = SimBoard("S3", embedded_broker.host, embedded_broker.port, tmp_path, key=rig.keys.ensure("S3"))
        sim.config["wifi"] = {"ssid": "hall", "password": "right"}
        sim.config["sim"]["access_point"] = {"ssid": "hall", "password": "right"}
        sim.start()
        rig.boards.append(sim)
        sim.reboots = True
        sim.wait_for(lambda r: "sync" in r, timeout=20)
        change = {"broker.port": free_port()} if what == "broker" else {"wifi.password": "wrong"}
        row = svc.act("settings", {"board": "S3", "set": change, "trial": 10})
        _answer(rig, "S3", "staged", row["id"])
        said = "no broker answered" if what == "broker" else "WiFi not joined"
        sim.wait_for(_log("settings rolled back: " + said + " within 10 s"), timeout=40)
        birth = rig.wait_event(lambda e: e["type"] == "status" and e["board"] == "S3"
                               and "settings rolled back" in str(e["payload"].get("fault")), timeout=40)
        assert said in birth["payload"]["fault"]
        assert _config(sim)["broker"]["port"] == embedded_broker.port
        assert _config(sim)["wifi"]["password"] == "right" and _files(sim) == {"config.json"}
        assert any(a.startswith("board S3 went back to its previous settings") for a in svc.alerts()), svc.alerts()
    finally:
        rig.close()


# The switch's steps (settings_update.py, boot_trial.py): staging writes, each to a temporary name
# then renamed, 1. the stale trial file removed, 2. the previous
# configuration kept, 3. the new one as config.json, 4. the trial file; the
# commit removes the previous one, then the trial file; a roll-back renames
# the previous one over config.json, then removes the trial file.  A power
# loss leaves the flash as it was after one of those operations (a rename
# is atomic; a write left half-done is a .tmp nobody reads): each such state,
# booted, gives a whole configuration.
OLD, NEW = "old", "new"
STATES = {
    # name: (config.json, previous kept, trial file, leftover .tmp) -> (booted, rolled back, on trial)
    "staging, the stale trial file still there": ((OLD, None, [1, 120, 3], True), (OLD, False, False)),
    "staging, the previous one kept": ((OLD, OLD, None, True), (OLD, True, False)),
    "staging, the new one written": ((NEW, OLD, None, False), (OLD, True, False)),
    "staged": ((NEW, OLD, [0, 120, 9], False), (NEW, False, True)),
    "trial, its second boot": ((NEW, OLD, [1, 120, 9], False), (NEW, False, True)),
    "trial, its boots used up": ((NEW, OLD, [3, 120, 9], False), (OLD, True, False)),
    "commit, the previous one removed": ((NEW, None, [1, 120, 9], False), (NEW, False, False)),
    "roll-back, the previous one renamed back": ((OLD, None, [1, 120, 9], False), (OLD, False, False)),
}


@pytest.mark.parametrize("state", list(STATES))
def test_a_power_loss_at_any_step_of_the_switch_boots_a_whole_configuration(tmp_path, embedded_broker, state):
    (now, kept, trial, tmp), (booted, rolled_back, on_trial) = STATES[state]
    rig = Rig(tmp_path, embedded_broker)
    try:
        svc = rig.start_hub()
        sim = SimBoard("P1", embedded_broker.host, embedded_broker.port, tmp_path, key=rig.keys.ensure("P1"))
        old = json.loads(json.dumps(sim.config))
        new = json.loads(json.dumps(sim.config))
        new["broker"]["keepalive"] = 20
        text = {OLD: json.dumps(old), NEW: json.dumps(new)}
        sim.dir.mkdir(parents=True)
        (sim.dir / "config.json").write_text(text[now])
        if kept:
            (sim.dir / "config-previous.json").write_text(text[kept])
        if trial:
            (sim.dir / "config-trial.json").write_text(json.dumps(trial))
        if tmp:                                   # a write the power cut short
            (sim.dir / "config-previous.json.tmp").write_text(text[OLD][:40])
        sim.start(flash=False)
        rig.boards.append(sim)
        sim.wait_for(lambda r: "sync" in r, timeout=20)
        if on_trial:
            sim.wait_for(_log("settings committed"), timeout=30)
        birth = rig.wait_event(lambda e: e["type"] == "status" and e["board"] == "P1")
        assert json.loads((sim.dir / "config.json").read_text())["broker"]["keepalive"] == (
            20 if booted == NEW else 10)
        assert not (sim.dir / "config-previous.json").exists()
        fault = birth["payload"].get("fault") or ""
        assert fault.startswith("settings rolled back") == rolled_back, fault
        assert any("settings on trial" in str(r.get("log")) for r in sim.records) == on_trial
    finally:
        rig.close()
