"""What every event is (prover/events.py's union and the events of its own modules beside it:
events_keys.py, events_experiment.py, events_ops.py): a frozen pydantic model, no unknown field,
with `t`, the seconds since the run started, and `host`, the fleet host it came from (None on one
host). One definition, so an event module beside events.py adds kinds without importing it."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Ev(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    t: float = Field(ge=0.0, description="seconds since run start")
    host: str | None = Field(None, description="fleet host the event came from; None on one host")
