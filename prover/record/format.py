"""What a recording's lines are: a header line (`RecordingHeader`, MAGIC and the schema version),
then one event a line (`_dump_line`), and the limits a reader holds a file to."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prover import bounds
from prover.events import SCHEMA_VERSION

try:  # 2-3x faster than pydantic's dump for flat events; the reader validates either way
    import orjson as _orjson
except ImportError:  # pragma: no cover - optional
    _orjson = None

MAGIC = "c2tui-recording"
FLUSH_EVERY_S = 0.1
MAX_LINE = bounds.MAX_LINE  # bytes; our longest line (the header, with argv and config) is a few KiB
MAX_GPUS = bounds.MAX_GPUS  # a fleet's GPUs (RunConfig allows 64 a host); bounds what a reader allocates
T_TOLERANCE = 0.05  # seconds an event may be stamped before the one written ahead of it


class RecordingError(RuntimeError):
    pass


class RecordingHeader(BaseModel):
    model_config = ConfigDict(extra="ignore")
    kind: Literal["c2tui-recording"] = "c2tui-recording"  # MAGIC
    schema_version: int = SCHEMA_VERSION
    created: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    argv: list[str] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    tool: str = "c2tui 0.1.0"
    note: str | None = None


def _dump_line(e: Any) -> bytes:
    """One event as a JSON line (bytes). Events are flat models of JSON-able fields."""
    if _orjson is not None:
        try:
            d = e.__dict__
            if "host" in d and d["host"] is None:  # one-host events stay as they were
                d = {k: v for k, v in d.items() if k != "host"}
            return _orjson.dumps(d)
        except (TypeError, AttributeError):
            pass
    if hasattr(e, "model_dump_json"):
        return e.model_dump_json(exclude={"host"} if getattr(e, "host", 1) is None else None).encode()
    return json.dumps(e).encode()
