"""The host-RAM budget as given (the `host_ram_budget` knob): a size, or off for no limit.

Its one parse, for every door a value comes in by (TOML, `--host-ram-budget`, `--switch`,
attach `--send`, the controller, the fleet's controller), and how a person reads it. Beside
the knob table, not in pipeline/keys/host_ram.py: knobs is imported by pipeline, so the parse
living there would make a package cycle (the same reason vram_budget's lives in device/).
"""
from __future__ import annotations

from typing import Any

from prover import bounds
from prover.device.budget import gib, parse_bytes

OFF_WORDS = ("off", "none", "0", "")  # no limit; 0 is what RunStarted.config and ModeChange write for it
MAX_BYTES = bounds.MAX_BYTES  # an exbibyte: more than any host has, and far from int overflow in the sums
ACCEPTS = "SIZE|off"


def parse_spec(v: Any) -> int:
    """Bytes from '256GiB' / '64 GB' / 1234 (or its text, as events write it); 0 from off /
    none / 0. ValueError in one line naming the knob otherwise."""
    if isinstance(v, str) and v.strip().lower() in OFF_WORDS:
        return 0
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0:
        return 0
    try:
        n = parse_bytes(v.strip() if isinstance(v, str) else v)
    except ValueError as exc:
        raise ValueError(f"host_ram_budget: {exc}, or off") from None
    if n > MAX_BYTES:
        raise ValueError(f"host_ram_budget: {v!r} is over 1 EiB; give a smaller size, or off")
    return n


def show(v: int) -> str:
    """A budget as a person reads it (the summary, --help's default): off, or GiB."""
    return gib(v) if v else "off"
