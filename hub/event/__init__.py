"""The event's state, in rooms of its own: time (the hub clock), log (the append-only store and
its rows), folder (the event folder and its rounds), fold (the competition folded from the log) and
actions (what an operator action may do and would replace)."""
