"""SIGINT, SIGTERM and SIGHUP end every command as Ctrl-C does (docs/exit-codes.md): exit 3.
`run` and `record`: the engine stops cleanly (locks released, RunEnded recorded, the file
closed), the summary is printed; a dashboard quits now and puts the terminal back. SIGHUP is
the terminal closing (or `kill -HUP`): the summary may have nowhere to go then, and that must
not cost the exit status or print a traceback."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
T = TypeVar("T")


@contextmanager
def interrupting() -> Iterator[None]:
    """While inside, the first SIGTERM or SIGHUP raises KeyboardInterrupt in the main thread (as
    Ctrl-C); a later one is ignored (TERM then HUP 1 ms apart raised a second interrupt inside
    the first one's lock release: a traceback, found by the fuzz's signals class). Elsewhere
    than the main thread (a test's runner) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        seen.append(signum)
        if len(seen) == 1:
            raise KeyboardInterrupt()

    old = {s: signal.signal(s, on_signal) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class FirstStops:
    """From install() to uninstall() (main thread only): the first of SIGINT, SIGTERM and SIGHUP
    sets `stop` and raises KeyboardInterrupt; every later one is only noted (`seen`), so what
    the interrupt starts (an experiment putting a prover's knobs back) is not itself cut short
    by a second Ctrl-C a millisecond later. While `shielded` (the command closing) even the
    first is only noted. SIGHUP (the terminal gone) drops the output at once: the rest has
    nowhere to be printed."""

    SIGNALS = (signal.SIGINT, *STOP_SIGNALS)

    def __init__(self, stop: threading.Event | None = None) -> None:
        self.stop = stop
        self.seen: list[int] = []
        self.shielded = False
        self._old: dict[int, Any] = {}

    def install(self) -> "FirstStops":
        if threading.current_thread() is threading.main_thread() and not self._old:
            self._old = {s: signal.signal(s, self._on) for s in self.SIGNALS}
        return self

    def uninstall(self) -> None:
        old, self._old = self._old, {}
        for s, h in old.items():
            signal.signal(s, h)

    def _on(self, signum: int, frame: Any) -> None:
        self.seen.append(signum)
        if signum == signal.SIGHUP:
            drop_output()
        if len(self.seen) > 1 or self.shielded:
            return
        if self.stop is not None:
            self.stop.set()
        raise KeyboardInterrupt()


def on_loop(callback: Callable[[], Any]) -> None:
    """SIGINT, SIGTERM and SIGHUP call `callback` on the running asyncio loop (a dashboard's quit
    now: the terminal put back, exit 3). Left to Python, SIGTERM and SIGHUP killed a dashboard
    in the alternate screen with mouse reporting on, and an external SIGINT exited 0."""
    loop = asyncio.get_running_loop()
    for s in (signal.SIGINT, *STOP_SIGNALS):
        try:
            loop.add_signal_handler(s, callback)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            return


def sleep_until(event: threading.Event, seconds: float | None = None) -> bool:
    """event.wait(seconds), but in short sleeps: a Ctrl-C lands in time.sleep, never inside a
    Condition's own bookkeeping (an interrupt there once left its lock released twice, "release
    unlocked lock"). True once the event is set."""
    import time

    end = None if seconds is None else time.monotonic() + seconds
    while not event.is_set():
        left = 0.05 if end is None else min(0.05, end - time.monotonic())
        if left <= 0:
            return False
        time.sleep(left)
    return True


def drop_output() -> None:
    """The terminal is gone: stdout and stderr go to /dev/null from here on (no EIO at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
    os.close(devnull)


def printed(fn: Callable[[], T], fallback: Callable[[], T]) -> T:
    """fn() (which prints); if the terminal is gone (OSError on a write), drop the output and
    return fallback() (the same answer, unprinted)."""
    try:
        return fn()
    except OSError:
        drop_output()
        return fallback()
