"""What every event is (prover/events.py's union and the events of its own modules beside it,
e.g. prover/events_experiment.py): a frozen pydantic model with `t`, the seconds since the run
started, and `host`, the fleet host it came from (None on one host)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Ev(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    t: float = Field(ge=0.0, description="seconds since run start")
    host: str | None = Field(None, description="fleet host the event came from; None on one host")
