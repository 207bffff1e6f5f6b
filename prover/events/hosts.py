"""A fleet's hosts joining and leaving, and the host RAM book (the workers' buffers and the keys
admitted under host_ram_budget)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN; readers check every field's bound there too
from prover.events.base import _Ev


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
