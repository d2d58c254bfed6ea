"""Waiting in tests: for the condition asserted next, never for time.

    until(pred, what="...", timeout=10, seen=...)          # threads, processes
    await settle(pilot, pred, what="...", seen=...)         # a Textual app under Pilot
    await until_async(pred, what="...", seen=...)           # other asyncio code
    out = Output(proc.stdout); out.wait_for(line_pred, "...")   # a child's output

They return pred()'s first truthy value; at the deadline they fail with
what was awaited and what was last seen (`seen()` if given, else pred()'s
last value), so a failure says more than "timed out".
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Callable

# until() looks again after POLL_S, then each time 1.5 times later, up to POLL_MAX_S: a condition
# met at once is seen at once, and a long wait does not read a log, a page or a process list fifty
# times a second (in a suite that keeps two cores busy, every look is taken from another test)
POLL_S = 0.02
POLL_MAX_S = 0.25


def _polls(first: float):
    """The pauses between looks: first, then growing to POLL_MAX_S (a
    longer first one stays as it is)."""
    pause = first
    while True:
        yield pause
        pause = max(first, min(pause * 1.5, POLL_MAX_S))


def _timed_out(what: str, timeout: float, last: Any, seen: Callable[[], Any] | None) -> AssertionError:
    try:
        shown = seen() if seen is not None else last
    except Exception as e:                       # the state itself cannot be read: say so
        shown = f"<{e!r}>"
    return AssertionError(f"timed out after {timeout} s waiting for {what}; last seen: {shown!r}")


def until(pred: Callable[[], Any], what: str = "the condition", timeout: float = 10.0,
          seen: Callable[[], Any] | None = None, poll: float = POLL_S) -> Any:
    """Poll pred() until it is truthy (returned) or the deadline passes."""
    deadline = time.monotonic() + timeout
    pauses = _polls(poll)
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise _timed_out(what, timeout, last, seen)
        time.sleep(next(pauses))


async def settle(pilot: Any, pred: Callable[[], Any], what: str = "the condition", timeout: float = 10.0,
                 seen: Callable[[], Any] | None = None) -> Any:
    """Let a Textual app process what is queued until pred() is truthy:
    first until the app is idle, then in short steps up to the deadline
    (the app's timers and other threads' messages may still be on their
    way)."""
    deadline = time.monotonic() + timeout
    await pilot.pause()
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise _timed_out(what, timeout, last, seen)
        await pilot.pause(POLL_S)


async def until_async(pred: Callable[[], Any], what: str = "the condition", timeout: float = 10.0,
                      seen: Callable[[], Any] | None = None, poll: float = POLL_S) -> Any:
    """until() for a coroutine: the event loop runs on while it waits."""
    deadline = time.monotonic() + timeout
    pauses = _polls(poll)
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise _timed_out(what, timeout, last, seen)
        await asyncio.sleep(next(pauses))


class Output:
    """A child process's text output, read by a thread as it comes (so the
    pipe never fills and blocks the child) and waited on line by line."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[str] = []
        self.closed = False
        self._cond = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        try:
            for line in stream:
                with self._cond:
                    self.lines.append(line)
                    self._cond.notify_all()
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def wait_for(self, pred: Callable[[str], Any], what: str, timeout: float = 30.0, start: int = 0) -> str:
        """The first line from index `start` on for which pred holds."""
        deadline = time.monotonic() + timeout
        i = start
        with self._cond:
            while True:
                while i < len(self.lines):
                    if pred(self.lines[i]):
                        return self.lines[i]
                    i += 1
                tail = "".join(self.lines[-30:])
                if self.closed:
                    raise AssertionError(f"the output ended before {what}; its last lines:\n{tail}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out after {timeout} s waiting for {what}; "
                                         f"the last lines:\n{tail}")
                self._cond.wait(left)

    def wait_closed(self, timeout: float = 30.0) -> str:
        """All the output, once the child closed it."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.closed, timeout):
                raise AssertionError(f"the output still open after {timeout} s")
            return "".join(self.lines)

    def text(self) -> str:
        with self._cond:
            return "".join(self.lines)
