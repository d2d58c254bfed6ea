"""The rules of a competition, pure: format files and presets, the facts, the standings
engine, the relay model, written scenarios, times as text.  Imports nothing else of the hub."""
