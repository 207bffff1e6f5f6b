"""Events of the operators' console (issue 36), beside prover/events/'s union (which imports
them): the GPU's own health (NVML), the host's CPU and memory pressure, VRAM at one point of
each partition and a growth found across them, and why a proof class's queue waits.

Every figure says where it comes from: GpuHealth.source is "nvml" (read from the card) or
"modelled"; a simulated GPU emits none at all rather than invented figures. HostHealth is
always the real host (/proc), whatever the backend.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN
from prover.events.base import _Ev


class ProcMem(BaseModel):
    """One process's memory on a GPU (NVML's compute processes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pid: int
    bytes: int | None = Field(None, ge=0, description="None: NVML could not tell (no permission, MIG)")
    name: str = Field("", description="/proc/PID/comm where readable ('' in another pid namespace)")
    mine: bool = Field(False, description="this prover's own process")


class GpuHealth(_Ev):
    """The card's health, sampled off the hot path every health_sample_s. A field is None when
    the card or the driver does not report it (e.g. power on some boards)."""

    kind: Literal["gpu_health"] = "gpu_health"
    gpu: int
    source: Literal["nvml", "modelled"] = "nvml"
    temp_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = Field(None, description="the enforced power limit")
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    mem_clock_mhz: int | None = None
    throttle: list[str] = Field(default_factory=list, description="active clock-event reasons, by name "
                                "(sw_power_cap, hw_slowdown, sw_thermal, ...; gpu_idle left out)")
    throttle_mask: int | None = Field(None, description="NVML's bitmask as read (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS)")
    pcie_rx_bps: float | None = Field(None, ge=0.0, description="PCIe bytes/s received by the GPU (NVML, 20 ms window)")
    pcie_tx_bps: float | None = Field(None, ge=0.0, description="PCIe bytes/s sent by the GPU")
    procs: list[ProcMem] = Field(default_factory=list, description="processes holding memory on the GPU")


class HostHealth(_Ev):
    """The host's CPUs and memory pressure (Linux /proc; a field is None where the OS gives none)."""

    kind: Literal["host_health"] = "host_health"
    cpu_busy: list[float] = Field(default_factory=list, description="per core: busy share since the last sample, 0..1")
    cpu_pressure: float | None = Field(None, ge=0.0, le=1.0, description="PSI cpu some avg10 as a share")
    mem_pressure: float | None = Field(None, ge=0.0, le=1.0, description="PSI memory some avg10 as a share: time "
                                       "some task stalled on memory (reclaim, swap); not a bandwidth counter")
    mem_pressure_full: float | None = Field(None, ge=0.0, le=1.0, description="PSI memory full avg10 as a share")
    mem_available: int | None = Field(None, ge=0, description="MemAvailable bytes")
    mem_total: int | None = Field(None, ge=0)


class VramMark(_Ev):
    """VRAM at one fixed point of every partition (`point`: its GPU section's end, after its
    own frees), so successive marks compare like with like (prover/health/vram_growth.py)."""

    kind: Literal["vram_mark"] = "vram_mark"
    gpu: int
    part: str
    worker: str
    point: Literal["section_end"] = "section_end"
    live: int = Field(ge=0, description="bytes of the pool handed to live buffers")
    cached: int = Field(ge=0, description="bytes the pool holds beyond the live ones")
    own: int = Field(0, ge=0, description="live bytes the marking worker still owns (0 unless it kept some)")
    owners: dict[str, int] = Field(default_factory=dict, description="live bytes by owner")
    device_used: int | None = Field(None, description="NVML used bytes (None: unknown)")


class VramGrowth(_Ev):
    """A growth found (state growing) or gone (cleared) in one VRAM series of a GPU across the
    last `window` marks: Mann-Kendall trend test, Sen's slope with its confidence interval."""

    kind: Literal["vram_growth"] = "vram_growth"
    gpu: int
    state: Literal["growing", "cleared"]
    series: Literal["owner", "live", "cached", "outside_pool"] = Field(
        description="owner: one owner's bytes at its own marks; outside_pool: NVML used less the pool")
    owner: str = Field(description="whose bytes grow: a worker id, 'pool' (the cache), 'outside the pool'")
    slope: float = Field(description="Sen's slope, bytes per partition")
    slope_low: float = Field(description="its confidence interval's low end (> 0 when growing)")
    slope_high: float
    p: float = Field(ge=0.0, le=1.0, description="Mann-Kendall two-sided p-value")
    window: int = Field(ge=2, description="marks tested")
    grown: int = Field(description="bytes from the window's first mark to its last")
    headroom: int | None = Field(None, description="budget left at the last mark (bytes)")


class QueueWait(_Ev):
    """Why a proof class's oldest waiting partition waits, when that reason changes ('' : it no
    longer waits). `gpus`: where the class may run now (placement, cordons)."""

    kind: Literal["queue_wait"] = "queue_wait"
    proof_class: str
    waiting: int = Field(ge=0)
    reason: Text
    gpus: list[int] = Field(default_factory=list)
