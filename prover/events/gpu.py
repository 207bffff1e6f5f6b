"""What happens on a GPU: lock requests, grants and releases, allocations and frees, VRAM samples,
fallbacks and OOMs, a GPU section's start (SectionBegan: said at the moment its knobs are read,
under the controller's lock, so it lands after every ModeChange it saw and before every one it
did not; the fold charges the section to the segment open then, prover/fold/sections.py), a new
regime settled on the GPU, and the device-global sync with whom it waited behind."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN; readers check every field's bound there too
from prover.events.base import _Ev

# a lock some discipline declares (prover.disciplines.lock_order: mem, compute, ...);
# open here so a discipline that adds a lock needs no new event schema
LockName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]


class LockRequested(_Ev):
    kind: Literal["lock_requested"] = "lock_requested"
    gpu: int
    lock: LockName
    worker: str
    part: str | None = None


class LockAcquired(_Ev):
    kind: Literal["lock_acquired"] = "lock_acquired"
    gpu: int
    lock: LockName
    worker: str
    part: str | None = None
    wait: float = Field(ge=0.0)


class LockReleased(_Ev):
    kind: Literal["lock_released"] = "lock_released"
    gpu: int
    lock: LockName
    worker: str
    part: str | None = None
    hold: float = Field(ge=0.0)
    reason: Text | None = Field(None, description="set when not released by its holder: host_lost (a fleet host died holding it)")


class Alloc(_Ev):
    kind: Literal["alloc"] = "alloc"
    gpu: int
    owner: str = Field(description="worker id that owns the buffer")
    part: str | None = None
    name: str = Field(description="buffer name, e.g. d_a, d_bc")
    bytes: int = Field(ge=0)


class Free(_Ev):
    kind: Literal["free"] = "free"
    gpu: int
    owner: str
    part: str | None = None
    name: str
    bytes: int = Field(ge=0)
    reason: Text | None = Field(None, description="set when not freed by its owner: host_lost (a fleet host died holding it)")


class VramSample(_Ev):
    kind: Literal["vram_sample"] = "vram_sample"
    gpu: int
    budget: int
    pool_reserved: int = Field(ge=0, description="bytes the pool holds from the device")
    pool_used: int = Field(ge=0, description="bytes of the pool handed to live buffers")
    device_used: int | None = Field(None, description="NVML used bytes, None if unknown")
    device_total: int | None = None
    util: float | None = Field(None, description="GPU utilisation 0..1 (NVML or modelled)")


class Fallback(_Ev):
    kind: Literal["fallback"] = "fallback"
    gpu: int
    part: str
    worker: str
    reason: Text


class Oom(_Ev):
    kind: Literal["oom"] = "oom"
    gpu: int
    part: str | None = None
    worker: str
    requested: int
    free: int
    outcome: Literal["retried", "failed"] | None = Field(None, description="retried: the partition went on (fallback, "
                                                        "its GPU section again); failed: it ended the attempt; None: not said")
    cause: str | None = Field(None, description="switch | budget | leak | contention | injected | unknown "
                              "(docs/disciplines.md); None in recordings made before it was said")


class SwitchSettled(_Ev):
    """A GPU's room let the sections of a new regime (the knobs that decide how
    sections take room: lock_mode, two-lock's mem_sync and prestage, a budget cut) onto the GPU,
    once every section begun under the regimes before had left it (docs/disciplines.md,
    "Switching"). From here on the GPU runs the new knobs alone."""

    kind: Literal["switch_settled"] = "switch_settled"
    gpu: int
    regime: dict[str, str] = Field(description="the knobs that define it, e.g. {lock_mode: reserved}")
    waited: float = Field(ge=0.0, description="seconds its first section waited for the older ones to leave")
    drained: int = Field(ge=0, description="sections begun before it that left the GPU while it waited")
    budget: int | None = Field(None, description="the budget applied now, bytes (a cut waits for this; None: unchanged)")


class DeviceSyncStart(_Ev):
    """A mem holder starts a device-global sync (+ pool trim): it waits for every kernel queued
    on the GPU, i.e. behind whoever holds `compute` now (mem_sync=device, the seed's cause)."""

    kind: Literal["device_sync_start"] = "device_sync_start"
    gpu: int
    worker: str = Field(description="the worker that syncs (it holds mem)")
    part: str | None = None
    behind_worker: str | None = Field(None, description="compute holder at the start (None: nobody else)")
    behind_part: str | None = Field(None, description="the partition that compute holder runs")
    trim: bool = Field(True, description="a pool trim follows the sync, in the same wait")


class DeviceSyncEnd(_Ev):
    """The device-global sync (+ trim) is over: `duration` is what the mem holder waited."""

    kind: Literal["device_sync_end"] = "device_sync_end"
    gpu: int
    worker: str
    part: str | None = None
    behind_worker: str | None = None
    behind_part: str | None = None
    trim: bool = True
    start: float = Field(ge=0.0, description="t of the matching DeviceSyncStart")
    duration: float = Field(ge=0.0, description="seconds waited (sync + trim)")


class SectionBegan(_Ev):
    kind: Literal["section_began"] = "section_began"
    gpu: int
    worker: str
    part: str
    lock_mode: str = Field(description="the discipline the section runs under (the knobs it read)")
