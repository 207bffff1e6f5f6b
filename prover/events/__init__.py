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
SectionBegan (issue 33); Phase.r1cs, a sub-phase (SUB_PHASES: inside the pre-stage, issue 41). The
kinds are grouped by what they are about: run.py, work.py,
gpu.py, hosts.py, keys.py, experiment.py, ops.py; the union is here.
"""
from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field, TypeAdapter

from prover.events.base import READABLE_VERSIONS, SCHEMA_VERSION, _Ev
from prover.events.experiment import ExperimentEnded, ExperimentStarted, HoldEnded, HoldStarted
from prover.events.gpu import (Alloc, DeviceSyncEnd, DeviceSyncStart, Fallback, Free, LockAcquired, LockName,
                               LockReleased, LockRequested, Oom, SectionBegan, SwitchSettled, VramSample)
from prover.events.hosts import HostJoined, HostLeft, HostRam, HostRamAdmit, HostRamInfo, HostRamWait
from prover.events.keys import KeyEvicted, KeyLoad, KeyWait
from prover.events.ops import GpuHealth, HostHealth, QueueWait, VramGrowth, VramMark
from prover.events.run import GpuInfo, ModeChange, Note, RunEnded, RunStarted, Startup, Stall, WorkerStarted, WorkerStopped
from prover.events.work import (SUB_PHASES, DeadlineMissed, JobAction, PartitionCancelled, PartitionDone,
                                PartitionQueued, Phase, PhaseEnd, PhaseProgress, PhaseStart, ProofResult, SectorSubmitted)

__all__ = ["EVENT_ADAPTER", "Event", "LockName", "Phase", "SUB_PHASES", "READABLE_VERSIONS", "SCHEMA_VERSION", "parse_event", "_Ev",
           "Alloc", "DeadlineMissed", "DeviceSyncEnd", "DeviceSyncStart", "ExperimentEnded", "ExperimentStarted",
           "Fallback", "Free", "GpuHealth", "GpuInfo", "HoldEnded", "HoldStarted", "HostHealth", "HostJoined",
           "HostLeft", "HostRam", "HostRamAdmit", "HostRamInfo", "HostRamWait", "JobAction", "KeyEvicted", "KeyLoad",
           "KeyWait", "LockAcquired", "LockReleased", "LockRequested", "ModeChange", "Note", "Oom",
           "PartitionCancelled", "PartitionDone", "PartitionQueued", "PhaseEnd", "PhaseProgress", "PhaseStart",
           "ProofResult", "QueueWait", "RunEnded", "RunStarted", "SectionBegan", "SectorSubmitted", "Stall", "Startup",
           "SwitchSettled", "VramGrowth", "VramMark", "WorkerStarted", "WorkerStopped"]


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
