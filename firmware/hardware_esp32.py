# ESP32 hardware layer: buttons on pin interrupts, buzzer (active on a plain
# pin, passive through PWM), optional LED, WiFi.  Same interface as
# hardware_sim.py.  The press instant is read inside the interrupt handler.

import asyncio
import time

import machine
import network

DEBOUNCE_MS = 30


class Hardware:
    kind = "esp32"

    def __init__(self, cfg):
        self.presses = []
        self.press_flag = asyncio.ThreadSafeFlag()
        self._last = []
        self._pins = []
        for i, pin in enumerate(cfg["buttons"]):
            p = machine.Pin(pin, machine.Pin.IN, machine.Pin.PULL_UP)
            self._last.append(time.ticks_ms() - DEBOUNCE_MS)
            p.irq(trigger=machine.Pin.IRQ_FALLING, handler=self._handler(i + 1))
            self._pins.append(p)
        bz = cfg.get("buzzer") or {}
        self._buzz_pin = None
        self._pwm = None
        if "pin" in bz:
            pin = machine.Pin(bz["pin"], machine.Pin.OUT, value=0)
            if bz.get("kind", "passive") == "passive":
                self._pwm = machine.PWM(pin, freq=2000, duty_u16=0)
            else:
                self._buzz_pin = pin
        led = cfg.get("led")
        self._led = machine.Pin(led, machine.Pin.OUT, value=0) if led is not None else None
        self._wlan = network.WLAN(network.STA_IF)

    def _handler(self, station):
        idx = station - 1

        def irq(pin):
            t = time.ticks_ms()           # the press instant, read first
            if time.ticks_diff(t, self._last[idx]) < DEBOUNCE_MS:
                return
            self._last[idx] = t
            if pin.value() == 0:          # still pressed: not a bounce on release
                self.presses.append((station, t))
                self.press_flag.set()
        return irq

    # -- clock ---------------------------------------------------------
    def ticks_ms(self):
        return time.ticks_ms()

    def ticks_diff(self, a, b):
        return time.ticks_diff(a, b)

    # -- outputs -------------------------------------------------------
    def buzzer(self, freq):
        if self._pwm is not None:
            if freq:
                self._pwm.freq(freq)
                self._pwm.duty_u16(32768)
            else:
                self._pwm.duty_u16(0)
        elif self._buzz_pin is not None:
            self._buzz_pin.value(1 if freq else 0)

    def led(self, on):
        if self._led is not None:
            self._led.value(1 if on else 0)

    def log(self, msg):
        print(msg)

    def emit(self, obj):
        print(obj)                        # serial console only

    # -- network -------------------------------------------------------
    async def connect_network(self, cfg):
        w = self._wlan
        w.active(True)
        try:
            w.config(pm=network.WLAN.PM_NONE)   # power save off: latency matters
        except (AttributeError, ValueError):
            pass
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

    def storage_root(self):
        return "/data"

    async def run(self):
        while True:       # nothing to poll: buttons are interrupts
            await asyncio.sleep_ms(60000)
