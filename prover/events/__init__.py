"""The event contract: every state change of a run is one of these pydantic models.

One discriminated union (`Event`, keyed by `kind`) is written to recordings, folded into the
dashboard state and summarised. Timestamps `t` are seconds since run start (monotonic clock).
Bump SCHEMA_VERSION on any incompatible change; readers reject versions they do not know.
Version 2 added the fleet: every event may carry `host` (None on one host, and in version-1
recordings, which still read) and the HostJoined / HostLeft events. Version 3 added
DeviceSyncStart / DeviceSyncEnd (the device-global sync under the mem lock, with the compute
holder it waited behind); version 1 and 2 recordings still read (they have none).
Added with no bump: KeyLoad/KeyWait/KeyEvicted (events/keys.py) and SectorSubmitted.log2;
four experiment kinds (events/experiment.py); Oom.outcome and the kinds of events/ops.py
(issue 36); SwitchSettled and Oom.cause (the switch protocol, pipeline/gpu/room.py);
SectionBegan (events/sections.py, issue 33).
"""
from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter

from prover.events.base import _Ev
from prover.events.experiment import ExperimentEnded, ExperimentStarted, HoldEnded, HoldStarted
from prover.events.ops import GpuHealth, HostHealth, QueueWait, VramGrowth, VramMark
from prover.events.keys import KeyEvicted, KeyLoad, KeyWait
from prover.events.sections import SectionBegan

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN; readers check every field's bound there too

SCHEMA_VERSION = 3
READABLE_VERSIONS = frozenset({1, 2, 3})


class Phase(str, Enum):
    """Phases of one partition, in SupraSeal C2 order. CPU: synthesis, prep_msm, b_g2_msm,
    assemble, verify. GPU section: prestage (alloc + upload), ntt_h, msm."""

    synthesis = "synthesis"
    prep_msm = "prep_msm"
    prestage = "prestage"
    ntt_h = "ntt_h"
    msm = "msm"
    b_g2_msm = "b_g2_msm"
    assemble = "assemble"
    verify = "verify"


# a lock some discipline declares (prover.disciplines.lock_order: mem, compute, ...);
# open here so a discipline that adds a lock needs no new event schema
LockName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]


class RunStarted(_Ev):
    kind: Literal["run_started"] = "run_started"
    schema_version: int = SCHEMA_VERSION
    backend: Literal["sim", "cuda"]
    simulated: bool
    profile: str
    proved_log2: int = Field(description="constraints_log2 of the circuit really proved")
    modelled_log2: int = Field(description="size whose timings/VRAM the device models")
    gpus: int
    config: dict[str, Any] = Field(default_factory=dict)


class GpuInfo(_Ev):
    kind: Literal["gpu_info"] = "gpu_info"
    gpu: int
    name: str
    total_bytes: int
    budget_bytes: int
    simulated: bool
    nvml: bool = False


class WorkerStarted(_Ev):
    kind: Literal["worker_started"] = "worker_started"
    gpu: int
    worker: str


class WorkerStopped(_Ev):
    kind: Literal["worker_stopped"] = "worker_stopped"
    gpu: int
    worker: str
    reason: Text = ""


class PartitionQueued(_Ev):
    kind: Literal["partition_queued"] = "partition_queued"
    part: str = Field(description="partition id, e.g. s0p3")
    sector: int
    index: int
    proof_class: str = Field("c2", description="prover/classes.py: winning, window, c2")


class PhaseStart(_Ev):
    kind: Literal["phase_start"] = "phase_start"
    part: str
    phase: Phase
    worker: str
    gpu: int | None = None
    impl: str = Field("cpu", description="cpu | cuda | cpu-reference | sim")


class PhaseProgress(_Ev):
    kind: Literal["phase_progress"] = "phase_progress"
    part: str
    phase: Phase
    frac: float = Field(ge=0.0, le=1.0)


class PhaseEnd(_Ev):
    kind: Literal["phase_end"] = "phase_end"
    part: str
    phase: Phase
    worker: str
    gpu: int | None = None
    duration: float = Field(ge=0.0)
    ok: bool = True
    error: Text | None = None


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
    """A GPU's admission authority let the sections of a new regime (the knobs that decide how
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


class ModeChange(_Ev):
    """A live knob changed (lock_mode, mem_sync, workers_per_gpu, prestage, b_g2, paused)."""

    kind: Literal["mode_change"] = "mode_change"
    knob: str
    old: str
    new: str
    source: str = Field("controller", description="cli | key | switch | controller")
    gpu: int | None = Field(None, description="set for one GPU only (None: the whole host or fleet)")


class SectorSubmitted(_Ev):
    kind: Literal["sector_submitted"] = "sector_submitted"
    sector: int
    partitions: int
    proof_class: str = Field("c2", description="prover/classes.py: winning, window, c2")
    deadline_s: float | None = Field(None, ge=0.0, description="seconds from now (t) by which it must be done, "
                                     "the class's modelled deadline x time_scale (None: no deadline)")
    source: str | None = Field(None, description="who asked: key | attach:NAME | config | auto | controller (None: older recordings)")
    log2: int | None = Field(None, description="its class's circuit size proved (None: older recordings, the run's)")
    modelled_log2: int | None = Field(None, description="its class's modelled size (None: older recordings)")


class JobAction(_Ev):
    """An operator's job action (prover/pipeline/queue/jobs.py) and what it did, with its source."""

    kind: Literal["job_action"] = "job_action"
    action: Literal["cancel", "requeue", "cordon", "uncordon"]
    target: str = Field(description="s3p2 (a partition), s3 (a sector), gpu1")
    source: str
    detail: Text = ""


class PartitionCancelled(_Ev):
    """A partition cancelled by a job action: left the queue, or stopped in flight at a
    boundary (`where`: queued | before <phase>). Counted as cancelled, never as failed."""

    kind: Literal["partition_cancelled"] = "partition_cancelled"
    part: str
    where: str
    source: str


class DeadlineMissed(_Ev):
    """A sector's deadline passed with `left` partitions unfinished (reported then, once), or
    its last partition finished `late_s` after it (left 0)."""

    kind: Literal["deadline_missed"] = "deadline_missed"
    sector: int
    proof_class: str
    late_s: float = Field(ge=0.0, description="seconds past the deadline")
    left: int = Field(0, ge=0)


class ProofResult(_Ev):
    """A partition's proof was checked by the independent verifier (or not)."""

    kind: Literal["proof_result"] = "proof_result"
    part: str
    ok: bool
    checked: bool = True
    reason: Text | None = None


class PartitionDone(_Ev):
    kind: Literal["partition_done"] = "partition_done"
    part: str
    ok: bool
    seconds: float = Field(ge=0.0, description="queued -> done")
    reason: Text | None = None


class Stall(_Ev):
    kind: Literal["stall"] = "stall"
    what: Literal["lock", "phase"]
    gpu: int | None = None
    worker: str
    part: str | None = None
    name: str = Field(description="lock name or phase name")
    seconds: float


class Note(_Ev):
    """Free text worth showing in the event log (warnings, run notes)."""

    kind: Literal["note"] = "note"
    level: Literal["info", "warn", "error"] = "info"
    text: Text


class HostJoined(_Ev):
    """A fleet host's engine is up: its GPUs are numbered gpu_offset.. gpu_offset+gpus-1 in
    the fleet's events (gpu and worker names are fleet-wide, so one fold keys them)."""

    kind: Literal["host_joined"] = "host_joined"
    node: str = Field(description="Ray node id (short)")
    gpus: int
    gpu_offset: int


class HostLeft(_Ev):
    """A fleet host is gone: cleanly (lost=False) or its actor died (lost=True), in which case
    the partitions it held are queued again on the others (`requeued`)."""

    kind: Literal["host_left"] = "host_left"
    reason: Text
    lost: bool = False
    requeued: list[str] = Field(default_factory=list)


class HostRamInfo(_Ev):
    """The host's memory: its size and whether the figures that follow are modelled (sim:
    sizes scaled from the proved circuit to the modelled one) or native (the real arrays)."""

    kind: Literal["host_ram_info"] = "host_ram_info"
    total_bytes: int = Field(ge=0, description="the host's physical memory")
    modelled: bool = True
    log2: int = Field(description="the size the host bytes are for")


class HostRam(_Ev):
    """Host bytes one owner holds under one name, absolute (0: given back). Owners: `key`
    (the proving key, name its size), `pinned`, a worker id (names witness, abc, prep)."""

    kind: Literal["host_ram"] = "host_ram"
    owner: str
    name: str
    bytes: int = Field(ge=0)
    pinned: bool = Field(False, description="page-locked (counted against the pinned pool too)")
    part: str | None = None


class HostRamWait(_Ev):
    """A worker is held back before its partition's host buffers would exceed the host-RAM
    budget (a wait like a lock wait; never an OOM kill)."""

    kind: Literal["host_ram_wait"] = "host_ram_wait"
    worker: str
    part: str | None = None
    need: int = Field(ge=0)
    free: int = Field(description="budget minus what is held (may be negative after a budget cut)")
    budget: int = Field(ge=0)


class HostRamAdmit(_Ev):
    """A held-back worker's wait ended after `wait` seconds: admitted (it holds its host
    bytes now), or not (stopped, drained or scaled down while it waited)."""

    kind: Literal["host_ram_admit"] = "host_ram_admit"
    worker: str
    part: str | None = None
    wait: float = Field(ge=0.0)
    admitted: bool = True


class Startup(_Ev):
    """A start-up step before the first partition: circuit, keys (set-up or load), host
    kernels (numba compile or cache load), gpu kernels (CUDA compile), devices. `start`,
    then any `progress` (frac of the step, detail: what it is doing), then `end` with its
    seconds (ok False: it failed, detail says why)."""

    kind: Literal["startup"] = "startup"
    step: str
    state: Literal["start", "progress", "end"]
    frac: float = Field(0.0, ge=0.0, le=1.0)
    detail: Text = ""
    seconds: float | None = Field(None, ge=0.0, description="at end: how long the step took")
    ok: bool = True


class RunEnded(_Ev):
    kind: Literal["run_ended"] = "run_ended"
    reason: Text = "done"


Event = Annotated[
    Union[
        RunStarted, GpuInfo, WorkerStarted, WorkerStopped, PartitionQueued, PhaseStart,
        PhaseProgress, PhaseEnd, LockRequested, LockAcquired, LockReleased, Alloc, Free,
        VramSample, Fallback, Oom, SwitchSettled, DeviceSyncStart, DeviceSyncEnd, ModeChange, SectorSubmitted,
        ProofResult, PartitionDone, Stall, Note, HostJoined, HostLeft, HostRamInfo, HostRam, HostRamWait,
        HostRamAdmit, Startup, DeadlineMissed, JobAction, PartitionCancelled, KeyLoad, KeyWait, KeyEvicted, RunEnded,
        ExperimentStarted, HoldStarted, HoldEnded, ExperimentEnded, GpuHealth, HostHealth, VramMark, VramGrowth, QueueWait,
        SectionBegan,
    ],
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)  # readers: parse_event (strict), then bounds.event_problem


def parse_event(line: str | bytes) -> Event:
    """One JSON line as an event, strictly ("t": "1.0" refused, not coerced); pydantic.ValidationError."""
    return EVENT_ADAPTER.validate_json(line, strict=True)
