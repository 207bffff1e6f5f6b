"""A start-up step that says nothing (a numba compile) still moves the clock (issue 33): its
progress is repeated every HEARTBEAT_S while it runs, never after its end; the panel's mark
turns with the clock."""
from __future__ import annotations

import threading
import time

from prover.pipeline.startup import StartupSteps


def test_a_silent_step_beats_until_it_ends():
    got: list[tuple[float, str, str]] = []
    lock, t0 = threading.Lock(), time.monotonic()

    def emit(cls, **f):
        with lock:
            got.append((time.monotonic() - t0, f["step"], f["state"]))

    steps = StartupSteps(emit, time.monotonic)
    with steps.step("host_kernels", "numba compile"):
        time.sleep(0.05)
        end = time.monotonic() + 1.2
        while time.monotonic() < end and sum(s == "progress" for _, _, s in got) < 2:
            time.sleep(0.02)  # waits for the beats it needs, bounded
    states = [s for _, _, s in got]
    assert states[0] == "start" and states[-1] == "end" and states.count("progress") >= 2
    time.sleep(0.6)
    assert [s for _, _, s in got][-1] == "end"  # nothing after the end


def test_the_spinner_turns_with_the_event_clock():
    from c2tui.widgets.startup_panel import spinner

    assert spinner(0.0) != spinner(0.25) and spinner(0.0) == spinner(2.5)
