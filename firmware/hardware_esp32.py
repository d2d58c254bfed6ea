# ESP32 hardware layer: buttons on pin interrupts, buzzer (active on a plain
# pin, passive through PWM), optional LED, WiFi.  Same interface as
# hardware_sim.py.  The press instant is read inside the interrupt handler.

import asyncio
import time

import machine
import network
from micropython import const

_DEFAULT_LED = const(2)     # the on-board LED of most ESP32 DevKits


class Hardware:
    kind = "esp32"

    def __init__(self, cfg):
        self.edges = []          # (station, level, ticks), appended by the IRQs
        self.press_flag = asyncio.ThreadSafeFlag()
        self._pins = []
        for i, pin in enumerate(cfg["buttons"]):
            # buttons close to GND; the internal pull-up holds the pin high
            p = machine.Pin(pin, machine.Pin.IN, machine.Pin.PULL_UP)
            p.irq(trigger=machine.Pin.IRQ_FALLING | machine.Pin.IRQ_RISING,
                  handler=self._handler(i + 1))
            self._pins.append(p)
        bz = cfg.get("buzzer") or {}
        self._buzz_pin = None
        self._pwm = None
        if "pin" in bz:
            pin = machine.Pin(bz["pin"], machine.Pin.OUT, value=0)
            if bz.get("kind", "passive") == "passive":
                self._pwm = machine.PWM(pin, freq=2000, duty_u16=0)
                self.volume(bz.get("volume", 100))
            else:
                self._buzz_pin = pin
        led = cfg.get("led")
        self._led = machine.Pin(led, machine.Pin.OUT, value=0) if led is not None else None
        self._wlan = network.WLAN(network.STA_IF)
        self.root = "/data"      # the journal, the boot counter, the stations' state
        self._wifi = None
        # the reset cause (config.fault()): the chip's register
        self.fault = "watchdog reset" if machine.reset_cause() == machine.WDT_RESET else None

    @staticmethod
    def fallback():
        """For signalling a configuration error: just the on-board LED."""
        return Hardware({"buttons": [], "led": _DEFAULT_LED})

    def _handler(self, station):
        edges, flag = self.edges, self.press_flag

        def irq(pin):
            t = time.ticks_ms()           # the edge instant, read first
            # debouncing is gestures.Debouncer's job; here: record, wake
            edges.append((station, 1 - pin.value(), t))
            flag.set()
        return irq

    # -- clock ---------------------------------------------------------
    # the built-in functions themselves (no method wrapping them: each
    # function of a loaded module takes RAM)
    ticks_ms = time.ticks_ms
    ticks_diff = time.ticks_diff

    # -- outputs -------------------------------------------------------
    def volume(self, level):
        # a passive buzzer's loudness: the PWM duty, 100 % = half the period
        # (a square wave, the loudest); applied from the next sound on
        self._duty = 32768 * level // 100

    def buzzer(self, freq):
        if self._pwm is not None:
            if freq:
                self._pwm.freq(freq)
                self._pwm.duty_u16(self._duty)
            else:
                self._pwm.duty_u16(0)
        elif self._buzz_pin is not None:
            self._buzz_pin.value(1 if freq else 0)

    def led(self, on):
        if self._led is not None:
            self._led.value(1 if on else 0)

    log = print
    emit = print                          # serial console only

    reset = machine.reset                 # after a fatal error (app.main)

    def watchdog(self, t):
        """Start the watchdog (t ms; it cannot be stopped: the chip resets
        unless it is fed at least every t ms), or feed it (t 0)."""
        if t:
            self._wdt = machine.WDT(timeout=t)
        else:
            self._wdt.feed()

    # -- network -------------------------------------------------------
    async def connect_network(self, cfg):
        w = self._wlan
        w.active(True)
        try:
            w.config(pm=network.WLAN.PM_NONE)   # power save off: latency matters
            w.config(reconnects=-1)             # the driver keeps reconnecting by itself
        except (AttributeError, ValueError):
            pass
        self._wifi = cfg["wifi"]
        if not w.isconnected():
            wifi = cfg["wifi"]
            w.connect(wifi["ssid"], wifi.get("password", ""))
            for _ in range(200):
                if w.isconnected():
                    break
                await asyncio.sleep_ms(100)
        return w.isconnected()

    def network_ok(self):
        return self._wlan.isconnected()

    def rssi(self):
        try:
            return self._wlan.status("rssi")
        except (OSError, ValueError):
            return None

    async def run(self):
        """Buttons are interrupts; this task only nudges WiFi back up if the
        driver gave up (the MQTT client reconnects on its own)."""
        while True:
            await asyncio.sleep_ms(5000)
            w = self._wlan
            if not w.isconnected() and self._wifi is not None:
                try:
                    w.connect(self._wifi["ssid"], self._wifi.get("password", ""))
                except OSError:
                    pass
