"""What every event is (the union in prover/events/__init__.py and the kinds of the modules beside it:
run.py, work.py, gpu.py, hosts.py, keys.py, experiment.py, ops.py): a frozen pydantic model, no unknown field,
with `t`, the seconds since the run started, and `host`, the fleet host it came from (None on one
host). One definition, so an event module beside the union adds kinds without importing it."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


SCHEMA_VERSION = 3  # the union's (prover/events/__init__.py says what each version added)
READABLE_VERSIONS = frozenset({1, 2, 3})


class _Ev(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    t: float = Field(ge=0.0, description="seconds since run start")
    host: str | None = Field(None, description="fleet host the event came from; None on one host")
