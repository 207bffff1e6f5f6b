"""What every event is: seconds since the run started and, in a fleet, the host it came from.
Its own module so that groups of events can live beside prover/events.py (events_keys.py),
which holds the union of them all."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Ev(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    t: float = Field(ge=0.0, description="seconds since run start")
    host: str | None = Field(None, description="fleet host the event came from; None on one host")
