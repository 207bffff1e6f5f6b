"""The VRAM budget per GPU: a size, or a named scenario resolved against the profile and device.

    card           the profile's card memory (rtx5070ti-16g: 16 GiB, the seed's real setting,
                   where not even a second 12 GiB pre-stage fits); profile native (no card of
                   its own): the device's total memory
    two-prestage   room for two partitions' pre-stages (d_a + d_bc at the modelled size), not
                   three: 24 GiB for rtx5070ti-16g at 2^27 (the larger card the seed's two-lock
                   design needs)

A budget below one partition's pre-stage bytes can run nothing: it is refused at start
(config validation) and when changed live, with the numbers. Resident bytes held beside the
partitions (a circuit's matrices, abc=gpu: the GPU's room holds them) count against it too: a
scenario is resolved beside them (`two-prestage`: two partitions' room and what is resident) and
a budget must hold one partition beside them.

A partition's buffers (`Sizing.buffers`) depend on where a/b/c are made (the `abc` knob):
    host   d_a (32 B a row), d_bc (64 B a row): a, b, c built by the host and uploaded;
    gpu    the same, and z's upload form (prover/host/zpack.py): z (its field values packed, 32 B
           each, room for the circuit's field variables: ~3.5% of the family's variables) and
           z_cls (its classes as bits with a rank a 32 variables: 12 B a 32 variables); they go
           up, the R1CS kernel writes a, b, c into d_a and d_bc. z and a class byte a variable
           (33 B) took 4.21 GB a partition at 2^27; the form takes 0.20 GB.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from prover import bounds
from prover.device.profiles import Profile
from prover.host import zpack

SCENARIOS: dict[str, str] = {
    "card": "the profile's card memory (native: the device's total memory)",
    "two-prestage": "two partitions' pre-stages, not three (24 GiB for rtx5070ti-16g at 2^27)",
}
GiB = 1024**3
_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
}
_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_bytes(v: Any) -> int:
    """'24GiB' / '16 GB' / '512MiB' / 1234 -> bytes (int) up to bounds.MAX_BYTES (1 EiB: a 10^29-byte
    VRAM budget ran, and wrote a recording its own reader refused). GiB-style = 1024-based, GB = 1000-based."""
    n = _parse_bytes(v)
    if n > bounds.MAX_BYTES:
        raise ValueError(f"{v!r} is over 1 EiB (prover/bounds.py)")
    return n


def _parse_bytes(v: Any) -> int:
    if isinstance(v, bool):
        raise ValueError("a size, e.g. '24GiB' or a number of bytes")
    if isinstance(v, int):
        if v <= 0:
            raise ValueError("must be > 0 bytes")
        return v
    if isinstance(v, float):
        if not math.isfinite(v) or v <= 0:  # inf would overflow int(); found by benchmarks/fuzz_inputs.py
            raise ValueError("must be a finite number of bytes > 0")
        return int(v)
    if isinstance(v, str):
        m = _SIZE_RE.match(v)
        if m and m.group(2).lower() in _UNITS:
            x = float(m.group(1)) * _UNITS[m.group(2).lower()]
            if math.isfinite(x) and x >= 1:
                return int(x)
        raise ValueError(f"{v!r} is not a size: use e.g. '24GiB', '16GB', '512MiB' or bytes")
    raise ValueError("a size, e.g. '24GiB' or a number of bytes")



def parse_spec(v: Any) -> int | str:
    """A budget as given (a knob value, TOML, --vram-budget, --switch, attach): a scenario
    name, or a size in bytes. The one parse of it; ValueError in one line otherwise. Whether
    it holds a partition is `check`'s business (it needs the profile)."""
    if isinstance(v, str) and v.strip().lower() in SCENARIOS:
        return v.strip().lower()
    try:
        return parse_bytes(v.strip() if isinstance(v, str) else v)
    except ValueError as exc:
        raise ValueError(f"vram_budget: {exc}, or one of {', '.join(SCENARIOS)}") from None


def show(v: int | str) -> str:
    """A spec as the dashboard and ModeChange write it."""
    return v if isinstance(v, str) else gib(v)



class BudgetError(ValueError):
    """A budget that cannot hold one partition (the message has the numbers)."""


def gib(n: int) -> str:
    """Bytes as GiB (MiB below 1 GiB, bytes below 1 MiB), for messages and ModeChange."""
    if n >= GiB:
        return f"{n / GiB:.2f} GiB" if n % GiB else f"{n // GiB} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB" if n % (1 << 20) else f"{n >> 20} MiB"
    return f"{n} B"


ABC = ("host", "gpu")  # where a partition's a = A.z, b = B.z, c = C.z are made (the abc knob, resolved)
FAMILY_VARS_PER_ROW = 0.9502  # the circuit family's variables a domain row (docs/scale.md, measured 2^16..2^27)
FAMILY_FIELD_VARS_PER_ROW = 36 / 1024  # its field variables a row (Circuit.field_vars: 4 a round, 9 rounds a 1024-row lane)


@dataclass(frozen=True)
class Sizing:
    """A run's VRAM arithmetic: what one partition's pre-stage needs at the modelled size (its
    buffers by name), and how a budget spec reads in bytes there. `bytes` is the one place a
    spec is resolved and checked: config validation, the GPU's room (prover/pipeline/gpu/room.py)
    and a fleet host's figure all go through it."""

    profile: Profile
    log2: int  # the modelled size
    abc: str = "host"  # where a, b, c are made (ABC): gpu adds z's upload form to the plan
    variables: int | None = None  # the circuit's variables at the modelled size (None: the family's share)
    field_vars: int | None = None  # of them, those that may hold a field value (None: the family's share)

    @property
    def buffers(self) -> dict[str, int]:
        """A partition's buffers by name, as the pre-stage allocates them: d_a, d_bc, and with
        abc gpu z and z_cls, z's upload form (the module docstring)."""
        out = dict(self.profile.buffer_bytes(self.log2))
        if self.abc == "gpu":
            rows = 1 << self.log2
            nv = self.variables if self.variables is not None else int(FAMILY_VARS_PER_ROW * rows)
            nf = self.field_vars if self.field_vars is not None else int(FAMILY_FIELD_VARS_PER_ROW * rows)
            out.update(z=zpack.vals_bytes(max(1, nf)), z_cls=zpack.tab_bytes(nv))
        return out

    @property
    def upload(self) -> int:
        """What a partition's pre-stage uploads at most: a, b, c (abc host), or z's form (abc gpu)."""
        b = self.buffers
        return b["z"] + b["z_cls"] if self.abc == "gpu" else b["d_a"] + b["d_bc"]

    @property
    def need(self) -> int:
        """A whole partition's room: every buffer it allocates."""
        return sum(self.buffers.values())

    def bytes(self, spec: int | str, card: int | None = None, resident: int = 0) -> int | None:
        """The spec in bytes, checked to hold one partition beside `resident` bytes (BudgetError
        with the numbers); None when it is `card` on a profile with no card of its own and `card`
        (the device's memory) is not known here."""
        n = _resolve(spec, self.need, self.profile, card, resident)
        if n is not None and n - resident < self.need:
            named = f" ({spec})" if isinstance(spec, str) else ""
            beside = f" beside {gib(resident)} resident (the circuits' matrices)" if resident else ""
            raise BudgetError(
                f"vram_budget {gib(n)}{named} is below one partition's pre-stage of {gib(self.need)}{beside} "
                f"({' + '.join(self.buffers)} at 2^{self.log2}, profile {self.profile.name}): no partition could run; "
                f"give at least {gib(self.need + resident)} or one of {', '.join(SCENARIOS)}"
                + (", or abc host (no matrices on the GPU)" if resident else ""))
        return n


def _resolve(spec: int | str, need: int, profile: Profile, card: int | None, resident: int) -> int | None:
    """Bytes for a budget spec (Sizing.bytes: its one caller): a partition needs `need`, `resident`
    bytes are held beside the partitions."""
    if isinstance(spec, int):
        return spec
    if spec == "two-prestage":
        return 2 * need + resident
    if spec == "card":
        return profile.card_bytes or card
    raise BudgetError(f"unknown VRAM budget {spec!r}: a size (e.g. 16GiB) or one of {', '.join(SCENARIOS)}")
