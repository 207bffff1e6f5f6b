"""Recordings: the event stream as JSON lines, a header line first.

    with RecordingWriter(path, RecordingHeader(argv=sys.argv, config=cfg.public_dict())) as w:
        engine.add_sink(w.write)           # cheap: appends to a queue
    rec = read_recording(path)             # Recording(header, events, error, bad_line, count)
    rec = read_recording(path, sink=state.apply)   # streamed: each event handed on, none kept
    rec = read_recording(path, lines=store.add)    # each event with its line as read, none kept

The writer serialises and writes on its own thread, in batches, at least every ~100 ms and
on close, so a crash leaves a readable prefix. It never replaces an existing file unless
asked (`force=True`), and holds an exclusive lock (flock) on it so a second writer fails at
once instead of interleaving. A write error (no space, I/O error, the file or its directory
removed) is kept in `error` in the OS's words; the file is cut back to the last whole batch,
so what remains is a readable prefix (one whose header could not be written is removed).

Reading validates every line with pydantic (never eval/pickle) and bounds what it takes on a
file's word, by the bounds of prover/bounds.py: lines (MAX_LINE), events (MAX_EVENTS) and
bytes after gzip (MAX_DECOMPRESSED), counts (GPUs, hosts, workers) within the engine's own
limits, every number finite, times non-decreasing (within T_TOLERANCE), the header's nesting
bounded, the schema version known. A truncated, corrupt, reordered or implausible file gives
the valid prefix and the number of the first bad line; a file that is not a recording, an error.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import gzip
import json
import math
import os
import stat
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prover import bounds
from prover.inputs import InputError, open_input
from prover import events as ev
from prover.events import READABLE_VERSIONS, SCHEMA_VERSION, Event

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

    def __init__(self, path: str | Path, header: RecordingHeader | None = None, flush_every: float = FLUSH_EVERY_S,
                 force: bool = False) -> None:
        self.path = Path(path)
        self.header = header or RecordingHeader()
        self.flush_every = flush_every
        self._fd = _open_locked(self.path, force)
        self._ino = os.fstat(self._fd).st_ino
        self._good = 0  # bytes known to be whole lines on disk
        try:
            self._write_all(self.header.model_dump_json().encode() + b"\n")
        except OSError as exc:  # (a full disk): no 0-byte file left to block the retry without --force
            with contextlib.suppress(OSError):
                os.unlink(self.path) if os.stat(self.path).st_ino == self._ino else None
            os.close(self._fd)
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
                self._check_still_there()
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
                self._write_all(b"\n".join(lines) + b"\n")
                self.written += n
            except OSError as exc:
                self.dropped += n
                self._fail(exc)

    def _write_all(self, data: bytes) -> None:
        """Write a whole batch; on an error cut the file back to the last whole batch."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError:
            if stat.S_ISREG(os.fstat(self._fd).st_mode):
                try:
                    os.ftruncate(self._fd, self._good)
                    os.lseek(self._fd, self._good, os.SEEK_SET)
                except OSError:
                    pass
            raise
        self._good += len(data)

    def _check_still_there(self) -> None:
        """Writes to a removed file (or one in a removed directory) succeed and are lost."""
        try:
            if os.stat(self.path).st_ino != self._ino:
                raise OSError(errno.ENOENT, "the file was replaced by another")
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        if self.error is None:
            self.error = f"writing {self.path} failed: {exc.strerror or exc}"

    def flush(self, timeout: float = 5.0) -> None:
        """Block until everything enqueued so far is written (each batch goes straight to the OS)."""
        deadline = time.monotonic() + timeout
        while self._q and time.monotonic() < deadline and self._thread.is_alive():
            self._wake.set()
            time.sleep(0.002)

    def close(self) -> None:
        if self._closed:
            return
        self._closing = True
        self._wake.set()
        self._thread.join(timeout=30)
        self._closed = True
        try:
            os.close(self._fd)  # releases the lock too
        except OSError as exc:
            self._fail(exc)

    def __enter__(self) -> "RecordingWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _open_locked(path: Path, force: bool) -> int:
    """Open for writing under an exclusive lock; truncate only once the lock is ours, so a
    second writer (with or without force) never damages the first one's file."""
    # never through a symbolic link, never a device or FIFO (c2tui/outpath.py says the same
    # up front; this holds for every caller, and against a swap between check and open)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | (0 if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise RecordingError(f"{path} exists: refusing to overwrite it (use --force)") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RecordingError(f"{path}: is a symbolic link (refusing to write through it)") from None
        raise RecordingError(f"cannot write recording {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RecordingError(f"{path}: not a regular file (a device, FIFO or socket): refusing to write a recording there")
    os.set_blocking(fd, True)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise RecordingError(f"{path} is being written by another process (it holds the lock)") from None
        raise RecordingError(f"cannot lock recording {path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(os.fstat(fd).st_mode):
        os.ftruncate(fd, 0)
    return fd


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
    if not (errs := exc.errors()):
        return str(exc)
    e, loc = errs[0], ".".join(str(x) for x in errs[0].get("loc", ()))
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
    """What a recording claims, checked line by line: never beyond the engine's own limits."""

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
