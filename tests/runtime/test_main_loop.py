"""The hub's measured main loop (hub/runtime/main_loop.py): a pass every
period, a late one said (how long, how many since), at most once every
WARN_EVERY_S; the wait shortened by the pass's own time; a stop ends it
after one last pass.  Pure: a clock the test moves."""

from __future__ import annotations

from tabletimer.hub.runtime.main_loop import PERIOD_S, WARN_EVERY_S, MainLoop


class Moved:
    """A monotonic clock that moves only when told (a pass's work moves it)."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_pass_over_its_period_is_said_once_in_a_while_with_how_many():
    clock, said = Moved(), []
    loop = MainLoop(said.append, clock=clock)

    def work(took: float):
        return lambda: setattr(clock, "t", clock.t + took)
    loop.run_pass(work(0.010))
    assert said == [] and loop.overruns == 0 and abs(loop.last_s - 0.010) < 1e-9
    loop.run_pass(work(0.400))                                   # late: said at once
    assert len(said) == 1 and "a pass took 400 ms, over its 250 ms" in said[0]
    for _ in range(3):
        loop.run_pass(work(0.300))                               # late again, within WARN_EVERY_S: not said
    assert len(said) == 1 and loop.overruns == 4 and abs(loop.longest_s - 0.4) < 1e-9
    clock.t += WARN_EVERY_S
    loop.run_pass(work(0.260))
    assert len(said) == 2 and "(4 such passes since the last warning)" in said[1]
    assert loop.passes == 6


def test_the_wait_is_the_period_less_the_pass_and_a_stop_ends_after_one_last_pass():
    clock, waits, done = Moved(), [], []
    loop = MainLoop(lambda s: None, clock=clock)

    def wait(s: float) -> bool:
        waits.append(round(s, 3))
        clock.t += s
        return len(waits) == 3                                   # a stop request in the third wait

    def work() -> None:
        clock.t += 0.050
        done.append(clock.t)
    loop.run(work, wait, lambda: False)
    assert waits == [PERIOD_S, 0.2, 0.2] and len(done) == 3     # the pass after the stop still ran


def test_until_ends_it_before_any_wait():
    loop = MainLoop(lambda s: None)
    loop.run(lambda: None, lambda s: False, lambda: True)
    assert loop.passes == 0
