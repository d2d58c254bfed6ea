# Entry point on the ESP32 (run by MicroPython after boot.py).
import app
import hardware_esp32

app.main(hardware_esp32, "/config.json")
