"""The hub clock and the round's time base (host_clock.py is the only reader of the laptop's clocks)."""
