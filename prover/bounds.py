"""Every bound a reader puts on what it is given, in one place, with one message.

A reader (recordings, the TOML config, the attach wire, --gpus lists, proof JSON) must never
allocate, loop or recurse on a file's or a peer's word beyond what the engine itself could
produce. Each bound is named here; `over(what, value, bound)` is the one message; readers
turn it into their own error type (RecordingError, ConfigError, WireError, a usage error).
docs/exit-codes.md lists them.
"""
from __future__ import annotations

import math
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
    MAX_ID_LEN, lists to MAX_LIST), as one line; None when every field is within. One place for
    what a recording or a peer may claim (issue 35: budget_bytes 10^400 was an OverflowError in
    summary, a 1 MB part name hung the renderers)."""
    for k, v in e.__dict__.items():
        if v is None or type(v) is bool:
            continue
        if type(v) in (int, float):
            lo, hi = _NUMBERS.get(k, (-MAX_BYTES, MAX_BYTES))
            if not lo <= v <= hi:  # NaN fails both
                said = f"{v:.6g}" if type(v) is float else f"{v}" if abs(v) < 10**30 else f"an integer of {v.bit_length()} bits"
                return f"{k}={said} is outside {lo:g}..{hi:g} (prover/bounds.py)"
        elif isinstance(v, str) and len(v) > MAX_ID_LEN and k not in _TEXTS:
            return f"{k} is {len(v)} characters long, over the bound of {MAX_ID_LEN} for a name (prover/bounds.py)"
        elif isinstance(v, list) and len(v) > MAX_LIST:
            return over(f"{k} with items", len(v), MAX_LIST)
    return None


_TEXTS = frozenset({"text", "reason", "error", "detail", "why"})  # free text: cut, not refused (Text)
