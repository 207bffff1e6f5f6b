"""The run's own events: its start and settings (RunStarted, GpuInfo, a knob's ModeChange), its
workers, start-up steps, notes and stalls, and its end."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN; readers check every field's bound there too
from prover.events.base import SCHEMA_VERSION, _Ev


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


class ModeChange(_Ev):
    """A live knob changed (lock_mode, mem_sync, workers_per_gpu, prestage, b_g2, paused)."""

    kind: Literal["mode_change"] = "mode_change"
    knob: str
    old: str
    new: str
    source: str = Field("controller", description="cli | key | switch | controller")
    gpu: int | None = Field(None, description="set for one GPU only (None: the whole host or fleet)")


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
