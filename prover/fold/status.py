"""One status snapshot of a run, field for field what an on-call person asks (cuzk's GetStatus
as the floor): per GPU its name, VRAM total / budget / used / free, the partitions on it and
their phases, the lock holders and waiters; queues; proofs verified / failed / unchecked;
uptime; host and pinned bytes against their budgets; start-up if it is still going.

Built from the one fold (`status_of(state)`), so `c2tui status` over an attach socket says
what the dashboard shows. Pydantic, so `--json` is the model's dump.
"""
from __future__ import annotations

from pydantic import BaseModel, Field

from prover.fold.host_ram import budget_of
from prover.fold.model import DashboardState
from prover.fold.pace_verdict import Pace
from prover.fold.parts import GpuState
from prover.fold.rates import SETTLE_PROOFS
from prover.fold.segments import typed_knobs


class LockStatus(BaseModel):
    holder: str | None = None
    part: str | None = None
    held_s: float = Field(0.0, description="how long the holder has held it")
    waiters: list[str] = Field(default_factory=list)
    oldest_wait_s: float = 0.0


class Current(BaseModel):
    part: str
    worker: str | None
    phase: str | None
    for_s: float = Field(description="since the partition was queued")


class GpuStatus(BaseModel):
    gpu: int
    name: str
    simulated: bool
    host: str | None = None
    vram_total: int
    vram_budget: int
    vram_used: int = Field(description="pool: the bytes the pool holds from the device, live + pool-cached "
                           "(or live, if more); the GPU panel's 'pool', metrics' vram_pool_reserved_bytes")
    vram_live: int = Field(0, description="live: bytes of live buffers (History's 'VRAM live', metrics' vram_live_bytes)")
    vram_free: int = Field(description="budget minus used")
    nvml_used: int | None = None
    util: float | None = None
    workers: int
    current: list[Current]
    locks: dict[str, LockStatus]
    done: int
    verified: int
    fallbacks: int
    ooms: int
    ooms_retried: int = Field(0, description="the partition went on after it")
    ooms_failed: int = Field(0, description="it ended the attempt")
    cordoned: bool = Field(False, description="takes no new work (a job action); in-flight work finishes")
    health: dict | None = Field(None, description="the latest GpuHealth (NVML; none on a simulated GPU)")
    pace: Pace | None = Field(None, description="what sets the GPU's pace over the last window (prover/fold/pace.py)")


class QueueStatus(BaseModel):
    queued: int
    in_flight: int
    oldest_queued_s: float = Field(0.0, description="age of the oldest partition not yet started")
    done: int = 0
    deadlines_missed: int = 0
    overdue: int = Field(0, description="unfinished sectors past their deadline now")


class HostRamStatus(BaseModel):
    used: int
    budget: int = Field(description="host_ram_budget (0: none)")
    key: int = Field(description="the proving keys' host bytes, circuits apart (as the dashboard's host RAM legend)")
    circuits: int = Field(0, description="the circuits' bytes (their matrices, held under the keys' owners)")
    pinned: int
    total: int
    workers_holding: int
    waiting: list[str]
    modelled: bool


class RateStatus(BaseModel):
    """A rate with what it rests on (prover/fold/rates.py): proofs counted and a 95% interval."""

    per_min: float
    proofs: int
    ci: tuple[float, float] | None = Field(None, description="95% interval (exact Poisson), per minute")
    span_s: float = Field(description="seconds the rate is over")
    settling: bool = Field(description="fewer proofs than the fold's SETTLE_PROOFS: not yet meaningful")
    settle_proofs: int = Field(SETTLE_PROOFS, description="the proofs a rate needs to be more than settling")


class StatusReport(BaseModel):
    backend: str
    simulated: bool
    profile: str
    proved_log2: int
    modelled_log2: int
    uptime_s: float = Field(description="run time of the latest event")
    ended: bool
    end_reason: str | None
    knobs: dict[str, str | bool | int]
    gpus: list[GpuStatus]
    queues: dict[str, QueueStatus] = Field(description="by proof class")
    proofs: dict[str, int] = Field(description="verified, failed, unchecked")
    partitions: dict[str, int] = Field(description="ok, failed, unchecked, cancelled, in_flight, queued")
    fallbacks: int
    ooms: int
    stalls: int
    host_ram: HostRamStatus | None
    starting: list[str] = Field(default_factory=list, description="start-up steps still running")
    starting_for_s: dict[str, float] = Field(default_factory=dict, description="how long each has run (the "
                                             "latest event's time; a step that says nothing for a while reads short)")
    started: bool = Field(True, description="start-up is over: no step runs and the GPUs have registered "
                          "(`c2tui status` exits 4 until then)")
    history_dropped: int = Field(0, description="events the attach history left out (counts may be short)")
    rate_window: RateStatus | None = Field(None, description="verified/min over the rate window")
    rate_since_change: RateStatus | None = Field(None, description="verified/min since the last knob change")
    host_health: dict | None = Field(None, description="the latest HostHealth (/proc: CPUs, PSI, memory)")
    waits: dict[str, str] = Field(default_factory=dict, description="why each proof class waits (QueueWait)")
    alerts: list[str] = Field(default_factory=list, description="alert thresholds met now (c2tui status fills it "
                              "from prover.screen, the alert rules' numbers)")

    @property
    def healthy(self) -> bool:
        return self.proofs["failed"] == 0 and self.partitions["failed"] == 0


def _locks(g: GpuState, now: float) -> dict[str, LockStatus]:
    out = {}
    for name, lk in g.locks.items():
        first = min((since for _, since in lk.waiters.values()), default=None)
        out[name] = LockStatus(holder=lk.holder, part=lk.holder_part,
                               held_s=max(0.0, now - lk.since) if lk.holder else 0.0,
                               waiters=sorted(lk.waiters), oldest_wait_s=0.0 if first is None else max(0.0, now - first))
    return out


def _gpu(s: DashboardState, g: GpuState) -> GpuStatus:
    used = max(g.pool_reserved, g.live_bytes)
    budget = g.budget or g.total
    cur = [Current(part=p.part, worker=p.worker, phase=p.current, for_s=max(0.0, s.t - p.queued_t))
           for p in s.partitions.values() if p.gpu == g.gpu and p.done_t is None and p.phases]
    return GpuStatus(gpu=g.gpu, name=g.name, simulated=g.simulated, host=g.host, vram_total=g.total, vram_budget=budget,
                     vram_used=used, vram_live=g.live_bytes, vram_free=max(0, budget - used), nvml_used=g.device_used if g.nvml else None,
                     util=g.util, workers=len(g.workers), current=sorted(cur, key=lambda c: c.part),
                     locks=_locks(g, s.t), done=g.done, verified=g.verified, fallbacks=g.fallbacks, ooms=g.ooms,
                     cordoned=g.gpu in s.jobs.cordoned, ooms_retried=s.ops.oom_count("retried", g.gpu),
                     ooms_failed=s.ops.oom_count("failed", g.gpu) - s.ops.unsaid_count(g.gpu),
                     health=_dump(s.ops.health.get(g.gpu)), pace=s.pace.readout(g.gpu, s.t))


def _queues(s: DashboardState) -> dict[str, QueueStatus]:
    """By proof class, most urgent first (classes with nothing in them left out, c2 always in)."""
    out = {}
    overdue = [c for _, c, _ in s.queues.overdue(s.t)]
    for name, c in s.queues.classes.items():
        if name == "c2" or c.queued or c.in_flight or c.done or c.missed:
            out[name] = QueueStatus(queued=len(c.queued), in_flight=len(c.in_flight), oldest_queued_s=c.oldest(s.t),
                                    done=c.done, deadlines_missed=c.missed, overdue=overdue.count(name))
    return out


def _host_ram(s: DashboardState) -> HostRamStatus | None:
    h = s.host_ram
    if not h.owners and not h.total:
        return None
    return HostRamStatus(used=h.used, budget=budget_of(s.knobs), key=h.by_kind()["key"] - h.circuits(),
                         circuits=h.circuits(), pinned=h.pinned_bytes,
                         total=h.total, workers_holding=h.workers_held(), waiting=sorted(h.waiters),
                         modelled=h.modelled)


def status_of(s: DashboardState, history_dropped: int = 0) -> StatusReport:
    q = _queues(s)
    return StatusReport(
        backend=s.backend, simulated=s.simulated, profile=s.profile, proved_log2=s.proved_log2,
        modelled_log2=s.modelled_log2, uptime_s=s.t, ended=s.ended, end_reason=s.end_reason, knobs=typed_knobs(s.knobs),
        gpus=[_gpu(s, s.gpus[i]) for i in sorted(s.gpus)], queues=q,
        proofs={"verified": s.proofs_ok, "failed": s.proofs_failed, "unchecked": s.proofs_unchecked},
        partitions={"ok": s.partitions_ok, "failed": s.partitions_failed, "unchecked": s.partitions_unchecked,
                    "cancelled": s.jobs.cancelled,
                    "in_flight": sum(x.in_flight for x in q.values()), "queued": sum(x.queued for x in q.values())},
        fallbacks=s.fallbacks, ooms=s.ooms, stalls=s.stalls, host_ram=_host_ram(s), starting=s.startup.open,
        history_dropped=history_dropped, **_rates(s), host_health=_dump(s.ops.host),
        waits={c: w.reason for c, w in s.ops.waits.items()},
        starting_for_s={n: max(0.0, s.t - s.startup.steps[n].t0) for n in s.startup.open},
        started=s.ended or not (s.startup.open or (s.startup.steps and not s.gpus)))


def _rates(s: DashboardState) -> dict[str, RateStatus | None]:
    r = s.rates()
    since = None
    if r.since_change_per_min is not None and r.since_change_s is not None:
        since = RateStatus(per_min=r.since_change_per_min, proofs=r.since_change_proofs, ci=r.since_change_ci,
                           span_s=r.since_change_s, settling=r.since_change_settling)
    return {"rate_window": RateStatus(per_min=r.windowed_per_min, proofs=r.window_proofs, ci=r.window_ci,
                                      span_s=r.window_span_s, settling=r.settling), "rate_since_change": since}


def _dump(e) -> dict | None:
    return None if e is None else e.model_dump(exclude={"t", "kind"})
