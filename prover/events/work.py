"""The work's events: sectors submitted, partitions queued, their phases, proofs and ends, and the
operators' job actions on them (cancel, requeue, cordon) and the sectors' deadlines."""
from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import Field

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN; readers check every field's bound there too
from prover.events.base import _Ev


class Phase(str, Enum):
    """Phases of one partition, in SupraSeal C2 order. CPU: synthesis, prep_msm, b_g2_msm,
    assemble, verify. GPU section: prestage (alloc + upload), ntt_h, msm. A sub-phase runs inside
    another (SUB_PHASES): r1cs, the R1CS kernel making a, b, c from the uploaded z (abc gpu),
    inside the pre-stage that uploaded it (or inside ntt_h, on the fallback path)."""

    synthesis = "synthesis"
    prep_msm = "prep_msm"
    prestage = "prestage"
    r1cs = "r1cs"
    ntt_h = "ntt_h"
    msm = "msm"
    b_g2_msm = "b_g2_msm"
    assemble = "assemble"
    verify = "verify"


SUB_PHASES = frozenset({Phase.r1cs})  # inside another phase of the same worker: its time is the parent's too


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


class DeadlineMissed(_Ev):
    """A sector's deadline passed with `left` partitions unfinished (reported then, once), or
    its last partition finished `late_s` after it (left 0)."""

    kind: Literal["deadline_missed"] = "deadline_missed"
    sector: int
    proof_class: str
    late_s: float = Field(ge=0.0, description="seconds past the deadline")
    left: int = Field(0, ge=0)


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
