"""Start-up in plain sight: the engine's steps before the first partition (circuit, keys,
host kernels, gpu kernels, devices) as Startup events with progress, so that a 2^24 key
set-up or a first numba compile is a bar on the screen and a line in the summary, not a
blank minute. While a step runs, a heartbeat repeats its progress every HEARTBEAT_S (issue 33):
a numba compile says nothing for 20 s, and without it the dashboard's clock, the step's
elapsed time and `c2tui status` ("starting: STEP, N s") would stand still as if hung.

    steps = StartupSteps(emit, clock)
    with steps.step("keys", "set-up or cache") as s:
        ring.preload(log2, report=s.progress)   # the key set-up's own steps as progress (key_load.py)
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from prover import events as ev
from prover.device.base import Stopped

HEARTBEAT_S = 0.5  # a running step's progress is said again this often (the clock runs on screen)


class Step:
    def __init__(self, steps: "StartupSteps", name: str) -> None:
        self.steps, self.name, self.t0 = steps, name, steps.clock()
        self.detail = ""
        self.frac = 0.0

    def progress(self, frac: float, detail: str = "") -> None:
        self.detail = detail or self.detail
        self.frac = max(0.0, min(1.0, frac))
        self.steps.emit(ev.Startup, step=self.name, state="progress", frac=self.frac, detail=self.detail)

    @contextmanager
    def heartbeat(self, every: float = HEARTBEAT_S) -> Iterator[None]:
        """Repeat the step's progress every `every` seconds until the block ends."""
        done = threading.Event()

        def beat() -> None:
            while not done.wait(every):
                self.steps.emit(ev.Startup, step=self.name, state="progress", frac=self.frac, detail=self.detail)

        t = threading.Thread(target=beat, name=f"startup-{self.name}", daemon=True)
        t.start()
        try:
            yield
        finally:
            done.set()
            t.join(timeout=2 * every)


class StartupSteps:
    def __init__(self, emit: Callable[..., Any], clock: Callable[[], float]) -> None:
        self.emit, self.clock = emit, clock

    @contextmanager
    def step(self, name: str, detail: str = "") -> Iterator[Step]:
        s = Step(self, name)
        s.detail = detail
        self.emit(ev.Startup, step=name, state="start", detail=detail)
        try:
            with s.heartbeat():
                yield s
        except Stopped:  # the run was stopped (a --duration, ctrl+c) while this step ran: not a failure
            self.emit(ev.Startup, step=name, state="end", frac=s.frac, seconds=max(0.0, self.clock() - s.t0),
                      detail=f"stopped before it finished ({s.frac:.0%} done)")
            raise
        except BaseException as exc:
            self.emit(ev.Startup, step=name, state="end", frac=0.0, seconds=max(0.0, self.clock() - s.t0), ok=False,
                      detail=f"{type(exc).__name__}: {exc}"[:300])
            raise
        self.emit(ev.Startup, step=name, state="end", frac=1.0, seconds=max(0.0, self.clock() - s.t0), detail=s.detail)
