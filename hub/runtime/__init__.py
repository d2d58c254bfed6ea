"""The hub as it runs: what starts, paces and stops its parts (docs/architecture.md)."""
