"""Benchmarks (`tabletimer bench`): the hall-scale run, the ranking engine, the console."""
