"""Recordings: the event stream as JSON lines, a header line first.

    with RecordingWriter(path, RecordingHeader(argv=sys.argv, config=cfg.public_dict())) as w:
        engine.add_sink(w.write)           # cheap: appends to a queue
    rec = read_recording(path)             # Recording(header, events, error, bad_line)

The writer serialises and writes on its own thread, in batches, flushing at least every
~100 ms and on close, so a crash leaves a readable prefix. Reading validates every line with
pydantic (never eval/pickle); a truncated or corrupt file gives the valid prefix plus the
1-based number of the first bad line; an unknown schema version or a file that is not a
recording is a clear error.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prover import events as ev
from prover.events import READABLE_VERSIONS, SCHEMA_VERSION, Event

try:  # 2-3x faster than pydantic's dump for flat events; the reader validates either way
    import orjson as _orjson
except ImportError:  # pragma: no cover - optional
    _orjson = None

MAGIC = "c2tui-recording"
FLUSH_EVERY_S = 0.1


class RecordingError(RuntimeError):
    pass


class RecordingHeader(BaseModel):
    model_config = ConfigDict(extra="ignore")
    kind: Literal["c2tui-recording"] = MAGIC
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


class RecordingWriter:
    """Thread-safe JSONL writer; `write` only enqueues (safe to call from engine threads)."""

    def __init__(self, path: str | Path, header: RecordingHeader | None = None, flush_every: float = FLUSH_EVERY_S) -> None:
        self.path = Path(path)
        self.header = header or RecordingHeader()
        self.flush_every = flush_every
        try:
            self._f = open(self.path, "wb")
            self._f.write(self.header.model_dump_json().encode() + b"\n")
            self._f.flush()
        except OSError as exc:
            raise RecordingError(f"cannot write recording {self.path}: {exc.strerror or exc}") from None
        self._q: deque[Any] = deque()
        self._wake = threading.Event()
        self._closing = False
        self._closed = False
        self.error: str | None = None
        self.written = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._loop, name="recording-writer", daemon=True)
        self._thread.start()

    # --- producer side -------------------------------------------------------------------
    def write(self, event: Any) -> None:
        if self._closed or self.error is not None:
            self.dropped += 1
            return
        self._q.append(event)
        if len(self._q) > 4096:
            self._wake.set()

    __call__ = write

    # --- writer thread --------------------------------------------------------------------
    def _loop(self) -> None:
        last_flush = time.monotonic()
        while True:
            self._wake.wait(self.flush_every / 2)
            self._wake.clear()
            closing = self._closing
            self._drain()
            now = time.monotonic()
            if self.error is None and (now - last_flush >= self.flush_every or closing):
                try:
                    self._f.flush()
                except OSError as exc:
                    self._fail(exc)
                last_flush = now
            if closing and not self._q:
                return

    def _drain(self) -> None:
        q = self._q
        dump = _dump_line
        while q:
            n = min(len(q), 4096)
            pop = q.popleft
            lines = [dump(pop()) for _ in range(n)]
            if self.error is not None:
                self.dropped += n
                continue
            try:
                self._f.write(b"\n".join(lines) + b"\n")
                self.written += n
            except OSError as exc:
                self.dropped += n
                self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        if self.error is None:
            self.error = f"writing {self.path} failed: {exc.strerror or exc}"

    def flush(self, timeout: float = 5.0) -> None:
        """Block until everything enqueued so far is written and flushed."""
        deadline = time.monotonic() + timeout
        while self._q and time.monotonic() < deadline and self._thread.is_alive():
            self._wake.set()
            time.sleep(0.002)
        if self.error is None:
            try:
                self._f.flush()
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        if self._closed:
            return
        self._closing = True
        self._wake.set()
        self._thread.join(timeout=30)
        self._closed = True
        try:
            self._f.close()
        except OSError as exc:
            self._fail(exc)

    def __enter__(self) -> "RecordingWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class Recording:
    header: RecordingHeader | None
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    bad_line: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _short(exc: ValidationError) -> str:
    errs = exc.errors()
    if not errs:
        return str(exc)
    e = errs[0]
    loc = ".".join(str(x) for x in e.get("loc", ()))
    more = f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""
    return f"{loc + ': ' if loc else ''}{e.get('msg')}{more}"


def parse_header(line: bytes | str) -> RecordingHeader:
    """Raise RecordingError unless `line` is a recording header of a known schema version."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        raise RecordingError("line 1: not a c2tui recording (the first line is not JSON)") from None
    if not isinstance(obj, dict) or obj.get("kind") != MAGIC:
        raise RecordingError("line 1: not a c2tui recording (no c2tui-recording header)")
    ver = obj.get("schema_version")
    if type(ver) is not int or ver not in READABLE_VERSIONS:
        raise RecordingError(f"line 1: unknown recording schema version {ver!r} "
                             f"(this c2tui reads versions {', '.join(map(str, sorted(READABLE_VERSIONS)))})")
    try:
        return RecordingHeader.model_validate(obj)
    except ValidationError as exc:
        raise RecordingError(f"line 1: bad recording header: {_short(exc)}") from None


def read_recording(path: str | Path, limit: int | None = None) -> Recording:
    """Read and validate a recording; never raises for bad content (see Recording.error).
    An unreadable file raises RecordingError."""
    p = Path(path)
    try:
        f = open(p, "rb")
    except OSError as exc:
        raise RecordingError(f"cannot read {p}: {exc.strerror or exc}") from None
    with f:
        first = f.readline()
        if not first.strip():
            return Recording(header=None, error="line 1: empty file, not a c2tui recording", bad_line=1)
        try:
            header = parse_header(first)
        except RecordingError as exc:
            return Recording(header=None, error=str(exc), bad_line=1)
        rec = Recording(header=header)
        out = rec.events
        parse = ev.EVENT_ADAPTER.validate_json
        n = 1
        for raw in f:
            n += 1
            if not raw.strip():
                continue
            try:
                out.append(parse(raw))
            except ValidationError as exc:
                if not raw.endswith(b"\n"):
                    rec.error = f"line {n}: truncated (the recording stops mid-line)"
                else:
                    rec.error = f"line {n}: not a valid event: {_short(exc)}"
                rec.bad_line = n
                break
            if limit is not None and len(out) >= limit:
                break
        return rec
