# Portable tests of firmware/config.py: every key a hardware layer reads is
# checked before it is built, so a bad configuration plays the configuration
# error instead of crashing (the ESP32's 'wifi', the simulator's 'sim').
import config

KEY = "00" * 32


def good(**more):
    c = {"board": "T07", "key": KEY, "broker": {"host": "10.0.0.1"}, "buttons": [4, 5]}
    c.update(more)
    return c


def rejected(cfg, kind, word):
    try:
        config.check(cfg, "c", kind)
    except config.ConfigError as e:
        assert word in str(e), (word, str(e))
        return
    raise AssertionError("accepted: %r" % (cfg,))


def test_the_esp32_needs_wifi_with_an_ssid():
    rejected(good(), "esp32", "wifi")
    rejected(good(wifi={"password": "x"}), "esp32", "ssid")
    rejected(good(wifi={"ssid": ""}), "esp32", "ssid")
    rejected(good(wifi={"ssid": "hall", "password": 5}), "esp32", "password")
    rejected(good(wifi="hall"), "esp32", "wifi")
    assert config.check(good(wifi={"ssid": "hall"}), "c", "esp32")
    assert config.check(good(wifi={"ssid": "hall", "password": "pw"}), "c", "esp32")


def test_the_simulator_checks_its_own_keys_and_needs_no_wifi():
    assert config.check(good(), "c", "sim")
    assert config.check(good(sim={"root": "/tmp/x", "clock_offset_ms": -5, "drift_ppm": 50}), "c", "sim")
    rejected(good(sim={"clock_offset_ms": "3"}), "sim", "sim.clock_offset_ms")
    rejected(good(sim={"drift_ppm": 1.5}), "sim", "sim.drift_ppm")
    rejected(good(sim={"root": 7}), "sim", "sim.root")
    rejected(good(sim={"heap": 1}), "sim", "sim.heap")
    rejected(good(sim=[1]), "sim", "'sim'")


def test_without_a_kind_only_the_common_keys():
    # (hub/fleet/deploy.py checks a template this way, and the WiFi itself)
    assert config.check(good(), "c")
