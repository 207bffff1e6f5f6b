"""Every bound a reader puts on what it is given, in one place, with one message.

A reader (recordings, the TOML config, the attach wire, --gpus lists, proof JSON) must never
allocate, loop or recurse on a file's or a peer's word beyond what the engine itself could
produce. Each bound is named here; `over(what, value, bound)` is the one message; readers
turn it into their own error type (RecordingError, ConfigError, WireError, a usage error).
docs/exit-codes.md lists them.
"""
from __future__ import annotations

import math
import re
from typing import Annotated, Any, Callable, TypeVar

from pydantic import AfterValidator

T = TypeVar("T")

# sizes (bytes)
MAX_LINE = 1 << 20  # one recording or wire line (our longest, a header with argv and config, is a few KiB)
MAX_CONFIG_BYTES = 1 << 20  # a --config TOML file
MAX_JSON_BYTES = 64 << 20  # a proof, key or public-inputs JSON file (a 2^24 key is far smaller)
MAX_PROOF_BYTES = 64 << 10  # proof.json: 8 coordinates of ~100 digits (a 63 MB one took 2.7 GB to refuse)
MAX_VK_BYTES = 4 << 20  # verification_key.json: ~2 KB + 200 B a public input
MAX_PUBLIC_BYTES = 4 << 20  # public.json: ~80 B a public input
MAX_TOKEN_BYTES = 4096  # an attach token file (a token is one line)
MAX_DECOMPRESSED = 256 << 20  # a recording's bytes after gzip (a day of a busy run is ~100 MiB)

# counts
MAX_EVENTS = 1_000_000  # a recording's events read (~135 B each: ~135 MiB, ~10 s to fold)
MAX_GPUS_HOST = 64  # GPUs one engine drives (RunConfig.gpus)
MAX_GPU_ID = 1023  # a device id in a --gpus list
MAX_GPUS = 256  # a fleet's GPUs, all hosts together (the dashboard lays out each one)
MAX_HOSTS = 64  # a fleet's hosts
MAX_WORKERS = MAX_GPUS * 16  # distinct workers a recording may name (16 a GPU: the knob's top)
MAX_DEPTH = 32  # nesting of JSON / TOML values (our deepest, a header's config, is 3)
MAX_CLIENT_LINES = 10_000  # lines one attach client may send in a connection
MIN_TOKEN_LEN, MAX_TOKEN_LEN = 16, 256  # an attach token's characters (ours: 32 random ones)
MAX_NAME_LEN = 64  # an attach client's name
MAX_ID_LEN = 128  # a name or id in an event: part, worker, host, owner, buffer, knob value, source
MAX_TEXT_LEN = 8192  # free text in an event (a note, a reason, a detail): longer is cut, never refused
CLIENT_LINES_PER_S = 100  # an attach client's lines read a second (a burst of as many): controls are
                          # an operator's, and a flood would take the prover's CPU (issue 35)

# time
HELLO_DEADLINE_S = 5.0  # a whole attach hello, first byte to last
MAX_RUN_S = 1e7  # any time or duration an event carries (~116 days; t = 1e308 was drawn without a word)

# what one event may say (recordings and the attach wire; event_problem below)
MAX_BYTES = 1 << 60  # any byte count, read or given (1 EiB: a budget, an alloc, a pool; 10^30 was drawn)
MAX_SECTORS = 10**9  # a sector number
MAX_PARTITIONS = 1000  # partitions a sector (RunConfig.partitions' top)
MAX_LOG2 = 40  # a circuit size (log2)
MAX_LIST = 10_000  # items of a list field (HostLeft.requeued)


class BoundError(ValueError):
    """A value over one of the bounds above; str() is the one-line message."""


def over(what: str, value: object, bound: object) -> str:
    """The one message: what is over which bound."""
    return f"{what} {value} is over the bound of {bound} (prover/bounds.py)"


def check(what: str, value: int | float, bound: int | float) -> None:
    if value > bound:
        raise BoundError(over(what, value, bound))


def finite(what: str, value: float) -> None:
    if not math.isfinite(value):
        raise BoundError(f"{what} {value} is not a finite number")


def nonfinite_field(obj: Any) -> str | None:
    """The first float field of a flat model (an event) that is NaN or infinite, as 'name=value'."""
    for k, v in obj.__dict__.items():
        if type(v) is float and not math.isfinite(v):
            return f"{k}={v}"
    return None


def depth(obj: Any) -> int:
    """Nesting of a parsed JSON / TOML value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(obj, 0)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict):
            o = list(o.values())
        if isinstance(o, list):
            deepest = max(deepest, d + 1)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((x, d + 1) for x in o)
    return deepest


def parse_nested(what: str, parse: Callable[[T], Any], text: T) -> Any:
    """parse(text) (json.loads, tomllib.loads), with nesting bounded: the parsers recurse, so
    a deep value is a BoundError, never a RecursionError."""
    try:
        obj = parse(text)
    except RecursionError:
        raise BoundError(over(f"{what} nesting depth", "(too deep to parse)", MAX_DEPTH)) from None
    d = depth(obj)
    if d > MAX_DEPTH:
        raise BoundError(over(f"{what} nesting depth", d, MAX_DEPTH))
    return obj


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT_LEN else text[:MAX_TEXT_LEN - 1] + "…"


# free text in an event (a note, a reason, an error): cut to MAX_TEXT_LEN, never refused, so
# that no engine message (an NVRTC log) makes its own recording unreadable
Text = Annotated[str, AfterValidator(_cut)]

# (low, high) of each number field of an event, by its name; a name not here is not a number
_NUMBERS: dict[str, tuple[float, float]] = {
    **dict.fromkeys(("bytes", "budget", "budget_bytes", "total_bytes", "pool_reserved", "pool_used", "device_used",
                     "device_total", "requested", "need"), (0, MAX_BYTES)),
    "free": (-MAX_BYTES, MAX_BYTES),  # host RAM: budget minus what is held, negative after a cut
    **dict.fromkeys(("t", "duration", "wait", "hold", "seconds", "start", "late_s", "deadline_s"), (0.0, MAX_RUN_S)),
    "sector": (0, MAX_SECTORS), "index": (0, MAX_PARTITIONS - 1), "partitions": (0, MAX_PARTITIONS),
    "left": (0, MAX_PARTITIONS), "gpus": (0, MAX_GPUS), "gpu_offset": (0, MAX_GPUS), "gpu": (0, MAX_GPUS - 1),
    **dict.fromkeys(("log2", "proved_log2", "modelled_log2"), (0, MAX_LOG2)),
    "schema_version": (0, 1000), "frac": (0.0, 1.0), "util": (0.0, 1.0),
}


def event_problem(e: Any) -> str | None:
    """The first field of an event over its bound (numbers by _NUMBERS, names and ids to
    MAX_ID_LEN, lists and maps to MAX_LIST), looking inside lists, maps and nested models with
    the same bounds (an item of `cpu_busy` within 0..1, of `gpus` a GPU index), and at the
    shapes an event's fields must agree on (_shape_problem), as one line; None when every field
    is within. One place for what a recording or a peer may claim (issue 35: budget_bytes
    10^400 was an OverflowError in summary, a 1 MB part name hung the renderers; issue 44: a
    1e308 inside a host-health list overflowed a sparkline, NaN there was "a bad --at")."""
    return _fields_problem(e.__dict__, "") or (_shape_problem(e) if e.kind in _SHAPED else None)


def _number_problem(name: str, v: int | float, lo: float, hi: float) -> str | None:
    if lo <= v <= hi:  # NaN fails both
        return None
    said = f"{v:.6g}" if type(v) is float else f"{v}" if abs(v) < 10**30 else f"an integer of {int(v).bit_length()} bits"
    return f"{name}={said} is outside {lo:g}..{hi:g} (prover/bounds.py)"


def _fields_problem(fields: dict[str, Any], where: str) -> str | None:
    for k, v in fields.items():  # the reader's hot loop: numbers and names first, and cheaply
        tv = type(v)
        if v is None or tv is bool:
            continue
        if tv is int or tv is float or isinstance(v, (int, float)):
            lo, hi = _NUMBERS.get(k, _ANY)
            if lo <= v <= hi:  # NaN fails both
                continue
            return _number_problem(where + k, v, lo, hi)
        if tv is str or isinstance(v, str):  # (a str enum too: a phase)
            if len(v) > MAX_ID_LEN and k not in _TEXTS:
                return f"{where + k} is {len(v)} characters long, over the bound of {MAX_ID_LEN} for a name (prover/bounds.py)"
            continue
        bad = _free_problem(where + k, v) if k in _FREE else _inside_problem(where + k, k, v)
        if bad is not None:
            return bad
    return None


def _inside_problem(name: str, k: str, v: Any) -> str | None:
    """A list, map or nested model of a typed field: its items within the field's item bound."""
    if isinstance(v, (list, dict)) and len(v) > MAX_LIST:
        return over(f"{name} with items", len(v), MAX_LIST)
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else None
    if items is None:  # a nested model (GpuHealth.procs' ProcMem): its own fields, by their names
        return _fields_problem(getattr(v, "__dict__", {}), name + ".")
    lo, hi = _ITEMS.get(k, _ANY)
    longest = MAX_TEXT_LEN if k in _LABELS else MAX_ID_LEN
    for key, x in items:
        at = f"{name}[{key!r}]" if isinstance(key, str) else f"{name}[{key}]"
        if isinstance(key, str) and len(key) > MAX_ID_LEN:
            return f"{name} has a key of {len(key)} characters, over the bound of {MAX_ID_LEN} (prover/bounds.py)"
        if x is None or type(x) is bool:
            continue
        if isinstance(x, (int, float)):
            bad = _number_problem(at, x, lo, hi)
        elif isinstance(x, str):
            bad = (f"{at} is {len(x)} characters long, over the bound of {longest} (prover/bounds.py)"
                   if len(x) > longest else None)
        else:
            bad = _inside_problem(at, k, x)
        if bad is not None:
            return bad
    return None


def _free_problem(name: str, v: Any) -> str | None:
    """A free-form map (a run's config, an experiment's result): every number in it finite."""
    stack = [v]
    while stack:
        o = stack.pop()
        if type(o) is float and not math.isfinite(o):
            return f"{name} holds {o}, not a finite number"
        if isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return None


GPU_TARGET = re.compile(r"gpu(\d{1,4})")  # a job action's target when it names a GPU (cordon, uncordon)


def target_gpu(target: str) -> int | None:
    """The GPU a cordon's target names (gpu3 -> 3), else None."""
    m = GPU_TARGET.fullmatch(target)
    return int(m.group(1)) if m else None


_SHAPED = frozenset({"job_action", "experiment_started"})  # events whose fields must agree


def _shape_problem(e: Any) -> str | None:
    """Fields of one event that must agree (a renderer indexes one by the other)."""
    kind = getattr(e, "kind", "")
    if kind == "job_action" and e.action in ("cordon", "uncordon"):
        g = target_gpu(e.target)
        if g is None or g >= MAX_GPUS:
            return f"a {e.action} of {e.target[:40]!r}: its target must name a GPU, gpu0..gpu{MAX_GPUS - 1}"
    elif kind == "experiment_started" and len(e.knobs) != len(e.arms):
        return f"experiment_started names {len(e.arms)} arms but gives knobs for {len(e.knobs)}"
    return None


_TEXTS = frozenset({"text", "reason", "error", "detail", "why"})  # free text: cut, not refused (Text)
_ANY = (-MAX_BYTES, MAX_BYTES)  # a number field or item with no bound of its own
_FREE = frozenset({"config", "result"})  # free-form maps: numbers finite (their size is the line's bound)
_LABELS = frozenset({"arms"})  # list items that are labels a person wrote (knob sets): text, not names
# (low, high) of each item of a list or map field, by the field's name; else any number within +-MAX_BYTES
_ITEMS: dict[str, tuple[float, float]] = {"cpu_busy": (0.0, 1.0), "gpus": (0, MAX_GPUS - 1), "owners": (0, MAX_BYTES)}


_NAMING = frozenset({"job_action", "queue_wait", "run_started", "host_joined", "host_left"})  # name GPUs elsewhere too


class RunGpus:
    """The GPUs a run has, from its own events: run_started's count (one host), each fleet
    host's host_joined range (two hosts' ranges never overlap). An event naming another GPU
    (its `gpu`, a cordon's target, a queue's `gpus`) is refused: health for gpu255 in a
    2-GPU run once drew a phantom panel. Before run_started nothing is known (and checked)."""

    def __init__(self) -> None:
        self.count: int | None = None
        self.hosts: dict[str | None, range] = {}  # the hosts joined and not left
        self.ranges: list[range] = []  # every range a host ever joined with

    def problem(self, e: Any) -> str | None:
        kind = e.kind
        g0 = e.__dict__.get("gpu")  # (getattr of a field a model lacks is pydantic's slow path)
        if self.count is not None and type(g0) is int and g0 < self.count and kind not in _NAMING:
            return None  # the common case: one of the run's GPUs, named once
        if kind == "run_started":
            self.count = e.gpus
            return None
        if kind == "host_joined":
            r = range(e.gpu_offset, e.gpu_offset + e.gpus)
            for h, o in self.hosts.items():
                if h != e.host and r.start < o.stop and o.start < r.stop:
                    return (f"host_joined: {e.host}'s gpu{r.start}..gpu{r.stop - 1} overlaps {h}'s "
                            f"gpu{o.start}..gpu{o.stop - 1}")
            self.hosts[e.host] = r
            self.ranges.append(r)
            return None
        if kind == "host_left":
            self.hosts.pop(e.host, None)
        if self.count is None:
            return None
        named = [g0] if type(g0) is int else []
        if kind == "job_action" and e.action in ("cordon", "uncordon"):
            named += [g for g in (target_gpu(e.target),) if g is not None]
        named += getattr(e, "gpus", []) if kind == "queue_wait" else []
        for g in named:
            if not (g < self.count or any(g in r for r in self.ranges)):
                have = f"gpu0..gpu{self.count - 1}" if self.count else "none yet"
                have += "".join(f", gpu{r.start}..gpu{r.stop - 1}" for r in self.ranges)
                return f"gpu{g} is not one of the run's GPUs ({have})"
        return None


def duplicate_key(raw: bytes, e: Any = None) -> str | None:
    """A key given twice in one JSON object of the line (`{"gpu": 0, "gpu": 255}`: a parser
    keeps the last, silently), as one line; None if none. `e`: the event parsed from it; a
    line with as many colons as the event was given keys (its own and its maps') has no key
    twice (the common case: a count); any other line is parsed again and its pairs looked at."""
    if e is not None:
        colons = raw.count(b":")
        if colons == len(e.model_fields_set) or colons == _keys(e):
            return None
    import json

    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for k, _ in items:
            if k in seen and not found:
                found.append(k)
            seen.add(k)
        return dict(items)

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None  # the parser that read it said what is wrong
    return f"the key {found[0][:40]!r} is given twice in one object" if found else None


def _keys(e: Any) -> int:
    """Keys an event was given: its fields set, and those of every map and model inside."""
    n, stack = 0, [e]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            n += len(o)
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
        elif hasattr(o, "model_fields_set"):
            n += len(o.model_fields_set)
            stack.extend(getattr(o, k) for k in o.model_fields_set)
    return n
