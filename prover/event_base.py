"""The base of every event (prover/events.py, prover/events_ops.py): frozen, no unknown field,
`t` in seconds since run start and the fleet host it came from. One definition, so an event
module beside events.py adds kinds without importing it (events.py imports them for the union)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Ev(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    t: float = Field(ge=0.0, description="seconds since run start")
    host: str | None = Field(None, description="fleet host the event came from; None on one host")
