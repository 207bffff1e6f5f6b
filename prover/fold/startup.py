"""Start-up in the fold: each step before the first partition (circuit, keys, host kernels,
gpu kernels, devices) with its progress, detail and seconds. The state's `startup` is one of
these (its concept: CONCEPT below)."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Mapping

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.world import World


# the keys step's first detail; a recording from before key_load.HELD ends it with this when the
# phases object already held the key (made before the run, in the same process)
LOOKUP = "cache lookup"
HELD = "held by this process, made before this run"  # = prover/pipeline/keys/key_load.py's


@dataclass
class StepState:
    t0: float
    t1: float | None = None
    frac: float = 0.0
    detail: str = ""
    seconds: float | None = None
    ok: bool = True


@dataclass
class StartupState:
    steps: dict[str, StepState] = field(default_factory=dict)  # in the order they started

    @property
    def open(self) -> list[str]:
        return [n for n, s in self.steps.items() if s.t1 is None]

    @property
    def failed(self) -> list[str]:
        return [n for n, s in self.steps.items() if not s.ok]

    @property
    def seconds(self) -> float:
        """First step's start to the last one's end (or now, while one is open)."""
        if not self.steps:
            return 0.0
        t0 = min(s.t0 for s in self.steps.values())
        ends = [s.t1 for s in self.steps.values() if s.t1 is not None]
        return max(ends, default=t0) - t0


def starting_of(u: StartupState, partitions: Mapping[str, Any]) -> bool:
    """Whether start-up is what there is to show: a step runs or failed, or none of them is
    left but no partition has begun yet."""
    if not u.steps:
        return False
    if u.open or u.failed:
        return True
    return not any(p.phases for p in partitions.values())


def startup(u: StartupState, e: ev.Startup, w: World) -> None:
    st = u.steps
    if e.state == "start" or e.step not in st:
        st[e.step] = StepState(t0=e.t, detail=e.detail)
    step = st[e.step]
    step.frac, step.detail = e.frac, e.detail or step.detail
    if e.state == "end":
        step.t1, step.seconds, step.ok = e.t, e.seconds, e.ok
        if e.step == "keys" and e.ok and step.detail == LOOKUP:  # nothing set up or read: see HELD
            step.detail = HELD
        if not e.ok:
            w.note("error", f"start-up {e.step} failed: {e.detail}", e)
        elif e.step == "keys":
            took = "" if step.detail == HELD else f" in {e.seconds or 0:.2f}s"
            w.note("info", f"keys: {step.detail}{took}", e)


class StartupSummary(BaseModel):
    seconds: float = Field(description="first start-up step's start to the last one's end")
    steps: dict[str, float] = Field(description="seconds per step, in the order they ran")
    details: dict[str, str] = Field(default_factory=dict, description="what each step did (e.g. keys: set-up or load)")
    failed: list[str] = Field(default_factory=list)


def summarize_startup(u: StartupState) -> StartupSummary | None:
    if not u.steps:
        return None  # a recording from before start-up was recorded
    return StartupSummary(seconds=u.seconds, steps={n: s.seconds or 0.0 for n, s in u.steps.items()},
                          details={n: s.detail for n, s in u.steps.items() if s.detail}, failed=u.failed)


CONCEPT = Concept("startup", StartupState, {ev.Startup: startup}, view=lambda u, now: copy.deepcopy(u))
