"""Reading a recording: every line validated with pydantic (never eval/pickle) and held to the
bounds of prover/bounds.py (lines, events, bytes after gzip, counts, finite numbers, times that
do not go back, the header's nesting, a known schema version); a damaged file gives its valid
prefix and the number of its first bad line."""
from __future__ import annotations

import gzip
import json
import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from prover import bounds
from prover import events as ev
from prover.events import READABLE_VERSIONS, Event
from prover.inputs import InputError, open_input
from prover.record.format import MAGIC, MAX_GPUS, MAX_LINE, T_TOLERANCE, RecordingError, RecordingHeader


@dataclass
class Recording:
    header: RecordingHeader | None
    events: list[Event] = field(default_factory=list)  # empty when read with a sink
    error: str | None = None
    bad_line: int | None = None
    count: int = 0  # valid events read (kept or handed to the sink)

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
        obj = bounds.parse_nested("the header's", json.loads, line)
    except bounds.BoundError as exc:
        raise RecordingError(f"line 1: {exc}") from None
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


class _Plausible:
    """Checks on what a recording claims, line by line: the reader (and the fold after it)
    must never allocate or loop on a file's word beyond the engine's own limits."""

    def __init__(self) -> None:
        self.last_t = 0.0
        self.compute: dict[tuple[str | None, int], str] = {}  # (host, gpu) -> the compute holder
        self.hosts: set[str] = set()
        self.workers: set[str] = set()
        self.gpus = bounds.RunGpus()  # the GPUs the run has: an event naming another is refused

    def problem(self, e: Any) -> str | None:
        t = e.t
        if not math.isfinite(t):
            return f"time t={t} is not finite"
        bad = bounds.nonfinite_field(e)
        if bad is not None:
            return f"{bad} is not a finite number"
        if t < self.last_t - T_TOLERANCE:
            return f"out of order: t={t:g} after t={self.last_t:g} (events must be in time order)"
        self.last_t = max(self.last_t, t)
        if isinstance(e, ev.RunStarted):
            if e.schema_version not in READABLE_VERSIONS:
                return (f"unknown schema version {e.schema_version} in run_started "
                        f"(this c2tui reads {', '.join(map(str, sorted(READABLE_VERSIONS)))})")
            if not 0 <= e.gpus <= MAX_GPUS:  # 0: a fleet, whose hosts bring their GPUs as they join
                return f"run_started claims {e.gpus} GPUs (0..{MAX_GPUS} possible)"
        elif isinstance(e, ev.HostJoined) and not (0 <= e.gpu_offset and 0 <= e.gpus and e.gpu_offset + e.gpus <= MAX_GPUS):
            return f"host_joined claims gpu{e.gpu_offset}.. +{e.gpus} GPUs (a fleet has at most {MAX_GPUS})"
        elif isinstance(e, ev.VramSample) and e.util is not None and not 0.0 <= e.util <= 1.0:
            return f"util={e.util} is not within 0..1"
        gpu = getattr(e, "gpu", None)
        if isinstance(gpu, int) and not 0 <= gpu < MAX_GPUS:
            return f"gpu {gpu} out of range (0..{MAX_GPUS - 1})"
        return bounds.event_problem(e) or self.gpus.problem(e) or self._compute(e) or self._counts(e)

    def _compute(self, e: Any) -> str | None:
        """At most one compute holder per GPU (the disciplines' invariant): a recording that
        claims two is not one a prover wrote (16 holders on one GPU were drawn without a word)."""
        if e.kind not in ("lock_acquired", "lock_released") or e.lock != "compute":  # disciplines.COMPUTE
            return None
        key = (e.host, e.gpu)
        if e.kind == "lock_released":
            if self.compute.get(key) == e.worker:
                del self.compute[key]
            return None
        held = self.compute.get(key)
        if held is not None and held != e.worker:
            return f"a second compute holder on gpu{e.gpu}: {e.worker} while {held} holds it"
        self.compute[key] = e.worker
        return None

    def _counts(self, e: Any) -> str | None:
        if e.host is not None and e.host not in self.hosts:
            self.hosts.add(e.host)
            if len(self.hosts) > bounds.MAX_HOSTS:
                return bounds.over("hosts", len(self.hosts), bounds.MAX_HOSTS)
        w = getattr(e, "worker", None)
        if w is not None and w not in self.workers:
            self.workers.add(w)
            if len(self.workers) > bounds.MAX_WORKERS:
                return bounds.over("workers", len(self.workers), bounds.MAX_WORKERS)
        return None


_GZIP_MAGIC = b"\x1f\x8b"
_GZ_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)  # a damaged or cut .gz, raised while reading


def _lines(f: Any) -> Any:
    """(number, raw line) with each read bounded by MAX_LINE; an over-long line ends the file
    with (number, None), a damaged compressed stream with (number, False)."""
    n = 1
    while True:
        try:
            raw = f.readline(MAX_LINE + 1)
        except _GZ_ERRORS:
            yield n + 1, False
            return
        if not raw:
            return
        n += 1
        if len(raw) > MAX_LINE:
            yield n, None
            return
        yield n, raw


def read_recording(path: str | Path, limit: int | None = None, sink: Callable[[Event], Any] | None = None,
                   lines: Callable[[Event, bytes], Any] | None = None) -> Recording:
    """Read and validate a recording, plain or gzip-compressed (known by its first bytes, not
    its name); never raises for bad content (see Recording.error). An unreadable file raises
    RecordingError. With `sink`, each valid event is handed to it as it is read and none is
    kept (a fold in constant memory: `summary` of a recording at the event bound); with `lines`,
    each with its raw line (a replay keeps the lines, parsing them back as it folds)."""
    p = Path(path)
    try:
        f: Any = open_input(p, "recording")  # a regular file: a FIFO or /dev/zero is refused, never read
        if f.read(2) == _GZIP_MAGIC:
            f.seek(0)
            f = gzip.GzipFile(fileobj=f, mode="rb")  # the file opened and checked, not the path again
        else:
            f.seek(0)
    except InputError as exc:
        raise RecordingError(str(exc)) from None
    except OSError as exc:
        raise RecordingError(f"cannot read {p}: {exc.strerror or exc}") from None
    with f:
        try:
            return _read(f, limit, sink, lines)
        except _GZ_ERRORS as exc:
            return Recording(header=None, error=f"line 1: damaged gzip stream ({exc})", bad_line=1)
        except OSError as exc:
            raise RecordingError(f"cannot read {p}: {exc.strerror or exc}") from None


def _read(f: Any, limit: int | None, sink: Callable[[Event], Any] | None, lines: Callable[[Event, bytes], Any] | None) -> Recording:
    first = f.readline(MAX_LINE + 1)
    if len(first) > MAX_LINE:
        return Recording(header=None, error=f"line 1: longer than {MAX_LINE} bytes, not a c2tui recording", bad_line=1)
    if not first.strip():
        return Recording(header=None, error="line 1: empty file, not a c2tui recording", bad_line=1)
    try:
        header = parse_header(first)
    except RecordingError as exc:
        return Recording(header=None, error=str(exc), bad_line=1)
    rec = Recording(header=header)
    put = rec.events.append if sink is None else sink
    keep: Callable[[Event, bytes], Any] = lines or (lambda e, _raw: put(e))  # lines: the raw line too
    parse = ev.parse_event  # strict: "t": "1.0" is refused, not coerced
    check = _Plausible()
    size = len(first)
    for n, raw in _lines(f):
        if raw is None:
            rec.error, rec.bad_line = f"line {n}: longer than {MAX_LINE} bytes", n
            break
        if raw is False:
            rec.error, rec.bad_line = f"line {n}: the gzip stream is damaged or cut short here", n
            break
        size += len(raw)
        if size > bounds.MAX_DECOMPRESSED or n - 1 > bounds.MAX_EVENTS:  # blank lines count (issue 35: 91 s of them)
            said = bounds.over("bytes read", size, bounds.MAX_DECOMPRESSED) if size > bounds.MAX_DECOMPRESSED else \
                bounds.over("events", n - 1, bounds.MAX_EVENTS) + "; a blank line counts as one"
            rec.error, rec.bad_line = f"line {n}: {said}", n
            break
        if not raw.strip():
            continue
        try:
            e = parse(raw)
        except ValidationError as exc:
            if not raw.endswith(b"\n"):
                rec.error = f"line {n}: truncated (the recording stops mid-line)"
            else:
                rec.error = f"line {n}: not a valid event: {_short(exc)}"
            rec.bad_line = n
            break
        problem = check.problem(e) or bounds.duplicate_key(raw, e)  # every field within its bound, each key once
        if problem is not None:
            rec.error, rec.bad_line = f"line {n}: {problem}", n
            break
        keep(e, raw)
        rec.count += 1
        if limit is not None and rec.count >= limit:
            break
    return rec
