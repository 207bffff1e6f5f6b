"""The events of an experiment (prover/experiment/): arms held in turn on one live prover, each
hold counted from its settle's end. Part of prover/events/'s union (no schema bump: older
recordings simply have none, and older readers never meet them in their own recordings).

The counting rule lives in prover/fold/tally.py and needs nothing but these and the
run's own events, so a recording carries its experiment: `replay`, `summary` and the tests
count it again exactly as the live runner did."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN
from prover.events.base import _Ev


class ExperimentStarted(_Ev):
    """An experiment begins: its arms (labels as given, and the knobs each one sets), the
    design, and the length of every hold and of the settle dropped after each switch."""

    kind: Literal["experiment_started"] = "experiment_started"
    experiment: int = Field(0, ge=0, description="its number in the run (a tune runs several)")
    name: str = Field("experiment", description="experiment | tune: KNOB | tune: confirm ...")
    arms: list[str] = Field(description="each arm's label, e.g. lock_mode=two-lock,mem_sync=stream")
    knobs: list[dict[str, str]] = Field(description="each arm's knobs as set (every knob any arm sets)")
    design: str = Field(description="abab | blocks | race")
    cycles: int = Field(ge=1, description="cycles planned (a race may stop sooner)")
    hold_s: float = Field(gt=0.0)
    settle_s: float = Field(ge=0.0)
    seed: int | None = None


class HoldStarted(_Ev):
    """An arm's knobs are set (their ModeChange events came just before): partitions whose GPU
    section begins after t + settle_s and before the HoldEnded count for it, when they finish."""

    kind: Literal["hold_started"] = "hold_started"
    experiment: int = Field(0, ge=0)
    hold: int = Field(ge=0, description="its place in the experiment's order")
    arm: int = Field(ge=0)
    cycle: int = Field(ge=0)
    hold_s: float = Field(gt=0.0)
    settle_s: float = Field(ge=0.0)


class HoldEnded(_Ev):
    kind: Literal["hold_ended"] = "hold_ended"
    experiment: int = Field(0, ge=0)
    hold: int = Field(ge=0)
    arm: int = Field(ge=0)
    cycle: int = Field(ge=0)
    complete: bool = Field(True, description="False: cut short (a stop, a refused knob): not counted")


class ExperimentEnded(_Ev):
    kind: Literal["experiment_ended"] = "experiment_ended"
    experiment: int = Field(0, ge=0)
    reason: Text = Field("done", description="done | stopped | interrupted | error: ...")
    result: dict[str, Any] | None = Field(None, description="the results (prover.stats.experiment.ExperimentResult)")

