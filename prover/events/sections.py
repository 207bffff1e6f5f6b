"""A GPU section's start, beside prover/events/'s union (issue 33): said at the moment its
knobs are read, under the controller's lock, so it lands after every ModeChange it saw and
before every one it did not. The fold charges the section to the segment open then
(prover/fold/sections.py); recordings without it fall back on the section's first GPU event."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from prover.events.base import _Ev


class SectionBegan(_Ev):
    kind: Literal["section_began"] = "section_began"
    gpu: int
    worker: str
    part: str
    lock_mode: str = Field(description="the discipline the section runs under (the knobs it read)")
