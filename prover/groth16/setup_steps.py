"""The key set-up's timed steps: seconds per step of this process's set-ups and cache reads (the
benchmarks print them), and a per-thread listener that start-up progress hangs on
(prover/pipeline/keys/key_load.py: observe_setup). Shared by the host set-up (setup.py) and the
device one (setup_device.py).
"""
from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

log = logging.getLogger("prover.groth16.setup")

# Seconds per step of this process's setups and cache reads (bench_native prints them): where
# a 2^24 setup's four minutes go was not known when the native runs were planned.
step_seconds: dict[str, float] = {}


# a start-up progress listener per thread (prover/pipeline/startup.py): (step, ended) calls
_observer = threading.local()


@contextmanager
def observe_steps(fn: Callable[[str, bool], None]) -> Iterator[None]:
    """Call fn(step, ended) at each setup / cache step this thread runs inside the block."""
    old = getattr(_observer, "fn", None)
    _observer.fn = fn
    try:
        yield
    finally:
        _observer.fn = old


@contextmanager
def step(name: str) -> Iterator[None]:
    """Time a set-up step (step_seconds, the log) and tell this thread's listener."""
    fn = getattr(_observer, "fn", None)
    if fn is not None:
        fn(name, False)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        dt = time.perf_counter() - t0
        step_seconds[name] = step_seconds.get(name, 0.0) + dt
        log.info("setup step %s: %.2f s", name, dt)
        if fn is not None:
            fn(name, True)
