"""Code both the hub (CPython) and the boards (MicroPython) run.

On a board, protocol.py and clocksync.py are copied next to the firmware and
imported by their plain names; this __init__ exists for the hub only."""
