"""Start-up in plain sight: the engine's steps before the first partition (circuit, keys,
host kernels, gpu kernels, devices) as Startup events with progress, so that a 2^24 key
set-up or a first numba compile is a bar on the screen and a line in the summary, not a
blank minute.

    steps = StartupSteps(emit, clock)
    with steps.step("keys", "set-up or cache") as s:
        with steps.setup_progress(s):      # the key set-up's own steps as progress
            pk, vk = load_or_setup(...)
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

from prover import events as ev

# setup's timed steps (prover/groth16/setup.py `_step`) in a fresh set-up: lagrange,
# qap_matvecs, scalars, fixed_base_g1 x5 (a, b_g1, l, h, ic), fixed_base_g2, save_keys
SETUP_STEP_ENDS = 10
ORDER = ("circuit", "keys", "host_kernels", "gpu_kernels", "devices")


class Step:
    def __init__(self, steps: "StartupSteps", name: str) -> None:
        self.steps, self.name, self.t0 = steps, name, steps.clock()
        self.detail = ""

    def progress(self, frac: float, detail: str = "") -> None:
        self.detail = detail or self.detail
        self.steps.emit(ev.Startup, step=self.name, state="progress", frac=max(0.0, min(1.0, frac)), detail=self.detail)


class StartupSteps:
    def __init__(self, emit: Callable[..., Any], clock: Callable[[], float]) -> None:
        self.emit, self.clock = emit, clock

    @contextmanager
    def step(self, name: str, detail: str = "") -> Iterator[Step]:
        s = Step(self, name)
        s.detail = detail
        self.emit(ev.Startup, step=name, state="start", detail=detail)
        try:
            yield s
        except BaseException as exc:
            self.emit(ev.Startup, step=name, state="end", frac=0.0, seconds=max(0.0, self.clock() - s.t0), ok=False,
                      detail=f"{type(exc).__name__}: {exc}"[:300])
            raise
        self.emit(ev.Startup, step=name, state="end", frac=1.0, seconds=max(0.0, self.clock() - s.t0), detail=s.detail)

    @contextmanager
    def setup_progress(self, s: Step) -> Iterator[None]:
        """The key set-up's (or cache load's) own steps as progress of `s`."""
        from prover.groth16 import setup

        ended, loaded = [0], [False]

        def on_step(name: str, done: bool) -> None:
            if name == "load_keys":
                loaded[0] = done
                s.progress(1.0 if done else 0.0, "loaded from the cache" if done else "loading from the cache")
                return
            ended[0] += done
            s.progress(min(1.0, ended[0] / SETUP_STEP_ENDS),
                       f"set-up: {name} ({ended[0] + (not done)}/{SETUP_STEP_ENDS})" if not done
                       else f"set-up: {name} done ({ended[0]}/{SETUP_STEP_ENDS})")

        with setup.observe_steps(on_step):
            yield
        if ended[0]:
            s.detail = "set up and cached"
        elif loaded[0]:
            s.detail = "loaded from the cache"
