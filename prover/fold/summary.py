"""The run summary, computed only from the one fold (prover.fold.model.DashboardState).

`summarize(state) -> Summary` (pydantic, JSON-able; c2tui.text.summary renders it). Throughput counts *verified* partitions only (an
unchecked or failed one is not output anyone can use) and is given these ways: the mean over
the whole run (since start, set-up included), in steady state (between the first and the
last verified partition, which leaves out the start-up ramp and the shutdown), over the last
rate window and since the last knob change (prover.fold.rates), per segment between knob
changes with the ratio to the one before (prover.fold.segments) and, for simulated runs, per
*modelled* minute (divided by the time_scale) so that runs at different time scales compare.
"""
from __future__ import annotations

from pydantic import BaseModel, Field

from prover.disciplines import COMPUTE
from prover.fold.experiments import ExperimentSummary, summarize_experiments
from prover.fold.host_ram import HostRamSummary, summarize_host_ram
from prover.fold.hosts import HostState
from prover.fold.keys import KeysSummary, summarize_keys
from prover.fold.model import DashboardState
from prover.fold.arm_pace import ArmPaceRow
from prover.fold.pace_verdict import Pace
from prover.fold.parts import LockState
from prover.fold.queues import ClassSummary, summarize_queues
from prover.fold.segments import SegmentSummary, segment_rows, typed_knobs
from prover.fold.startup import StartupSummary, summarize_startup


class LockSummary(BaseModel):
    acquisitions: int = 0
    wait_total: float = 0.0
    wait_mean: float = 0.0
    wait_max: float = 0.0
    hold_total: float = 0.0
    hold_mean: float = 0.0
    section_mean: float = Field(0.0, description="wait + hold per acquisition: time to get through the lock")


class PhaseSummary(BaseModel):
    count: int = 0
    mean: float = 0.0
    max: float = 0.0
    total: float = 0.0
    failed: int = 0


class GpuSummary(BaseModel):
    gpu: int
    name: str
    simulated: bool
    nvml: bool
    budget: int
    partitions_done: int
    partitions_verified: int = 0
    throughput_per_min: float = Field(description="verified partitions per minute")
    busy_share: float = Field(description="share of run time with GPU phases (ntt_h, msm) running, from events")
    kernel_busy_s: float
    compute_held_share: float = Field(0.0, description="share of run time with the compute lock held")
    util_mean: float | None = Field(None, description="mean utilisation over the run (NVML on a real GPU, modelled in sim)")
    steady_held_share: float | None = Field(
        None, description="compute held share between the first compute acquire and the last release")
    steady_util_mean: float | None = Field(None, description="mean utilisation in that same window")
    fallbacks: int
    ooms: int
    ooms_retried: int = Field(0, description="OOMs after which the partition went on (fallback, its GPU section again)")
    ooms_failed: int = Field(0, description="OOMs that ended the attempt (older recordings say neither: in ooms only)")
    mem: LockSummary
    compute: LockSummary
    locks: dict[str, LockSummary] = Field(default_factory=dict, description="every lock the GPU's disciplines declared")
    workers: int
    pace: Pace | None = Field(None, description="what set the GPU's pace over the run, from its first GPU section "
                              "(prover/fold/pace.py)")


class HostSummary(BaseModel):
    """One fleet host: its share of the work and how it ended."""

    host: str
    node: str
    gpus: list[int]
    partitions_done: int
    partitions_failed: int
    throughput_per_min: float = Field(description="partitions done per minute of the host's time in the fleet")
    alive: bool
    lost: bool
    requeued: int = Field(0, description="partitions taken back when the host was lost")


class Summary(BaseModel):
    backend: str
    simulated: bool
    profile: str
    proved_log2: int
    modelled_log2: int
    time_scale: float
    duration_s: float
    ended: bool
    end_reason: str | None
    knobs: dict[str, str | bool | int] = Field(description="the knobs at the end (typed: booleans and numbers as such)")
    knobs_at_start: dict[str, str | bool | int] = Field(
        default_factory=dict, description="the knobs the run started with (its RunStarted config), typed")
    partitions_ok: int = Field(description="finished with a verified proof")
    partitions_unchecked: int = Field(0, description="finished, proof never verified (not counted as ok)")
    partitions_failed: int
    partitions_abandoned: int = Field(0, description="stopped mid-way (quit now, ctrl+c, SIGINT): not failed")
    abandoned: list[str] = Field(default_factory=list, description="their ids (the first 50)")
    partitions_cancelled: int = Field(0, description="cancelled by a job action (not failed)")
    proofs_ok: int
    proofs_failed: int
    proofs_unchecked: int
    all_proofs_verified: bool = Field(description="some proofs, every one verified: none failed or unchecked")
    fallbacks: int
    ooms: int
    ooms_retried: int = Field(0, description="the partition went on: not a failure")
    ooms_failed: int = Field(0, description="ended the attempt")
    stalls: int
    mode_changes: int
    throughput_per_min: float = Field(description="verified partitions per minute, mean since start (set-up included)")
    rate_window_s: float = Field(30.0, description="the window of windowed_throughput_per_min")
    windowed_throughput_per_min: float = Field(0.0, description="verified/min over the last rate window of the run")
    since_change_throughput_per_min: float | None = Field(None, description="verified/min since the last knob change")
    since_change_s: float | None = Field(None, description="how long before the end the last knob change was")
    last_change: str | None = Field(None, description="the last knob change")
    windowed_proofs: int = Field(0, description="verified proofs windowed_throughput_per_min rests on")
    windowed_ci: tuple[float, float] | None = Field(None, description="its 95% interval (exact Poisson, /min)")
    since_change_proofs: int = Field(0, description="proofs since_change_throughput_per_min rests on")
    since_change_ci: tuple[float, float] | None = Field(None, description="its 95% interval (exact Poisson, /min)")
    segments: list[SegmentSummary] = Field(default_factory=list, description="the run split at every knob change")
    device_syncs_recorded: bool = Field(True, description="the recording can hold device-sync events (schema >= 3)")
    steady_throughput_per_min: float = Field(description="verified partitions per minute, first to last verified")
    modelled_throughput_per_min: float | None
    phases: dict[str, PhaseSummary]
    gpus: list[GpuSummary]
    hosts: list[HostSummary] = Field(default_factory=list, description="fleet hosts (empty on one host)")
    requeued: int = Field(0, description="fleet: partitions requeued from lost hosts")
    host_ram: HostRamSummary | None = Field(None, description="host memory (None in older recordings)")
    startup: StartupSummary | None = Field(None, description="start-up steps timed (None in older recordings)")
    keys: KeysSummary | None = Field(None, description="keys by size: loads, evictions, waits (None in older recordings)")
    classes: dict[str, ClassSummary] = Field(default_factory=dict, description="by proof class: latency, deadlines")
    events: int
    experiments: list[ExperimentSummary] = Field(default_factory=list, description="experiments' arms (prover/experiment/)")
    arm_pace: list[ArmPaceRow] = Field(default_factory=list, description="each experiment arm's pace, GPU by GPU, read "
                                       "over its complete holds (prover/fold/arm_pace.py; where the events were watched)")
    errors: list[str] = Field(default_factory=list)


def _lock(lk: LockState) -> LockSummary:
    n = lk.acquisitions
    return LockSummary(acquisitions=n, wait_total=lk.wait_total, wait_mean=lk.wait_total / n if n else 0.0,
                       wait_max=lk.max_wait, hold_total=lk.hold_total, hold_mean=lk.hold_total / n if n else 0.0,
                       section_mean=(lk.wait_total + lk.hold_total) / n if n else 0.0)


def summarize(state: DashboardState) -> Summary:
    s = state
    dur = s.t
    steady = 0.0
    if s.first_ok_t is not None and s.last_ok_t is not None and s.partitions_ok >= 2 and s.last_ok_t > s.first_ok_t:
        steady = 60.0 * (s.partitions_ok - 1) / (s.last_ok_t - s.first_ok_t)
    scale = float(s.config.get("time_scale", 1.0) or 1.0)
    gpus = []
    for i in sorted(s.gpus):
        g = s.gpus[i]
        steady_held, steady_util = g.steady_busy()
        gpus.append(GpuSummary(
            compute_held_share=min(1.0, g.lock(COMPUTE).hold_total / dur) if dur > 0 else 0.0,
            util_mean=g.util_sum / g.util_n if g.util_n else None,
            steady_held_share=steady_held, steady_util_mean=steady_util,
            gpu=i, name=g.name, simulated=g.simulated, nvml=g.nvml, budget=g.budget, partitions_done=g.done,
            partitions_verified=g.verified, throughput_per_min=60.0 * g.verified / dur if dur > 0 else 0.0,
            busy_share=min(1.0, g.kernel_busy / dur) if dur > 0 else 0.0, kernel_busy_s=g.kernel_busy,
            fallbacks=g.fallbacks, ooms=g.ooms, ooms_retried=s.ops.oom_count("retried", i),
            ooms_failed=s.ops.oom_count("failed", i) - s.ops.unsaid_count(i),
            mem=_lock(g.lock("mem")), compute=_lock(g.lock(COMPUTE)),
            locks={n: _lock(lk) for n, lk in g.locks.items()},
            workers=len(g.workers), pace=s.pace.run(i, s.t)))
    errors = [text for (_, level, text, _e) in s.log if level == "error"]
    r = s.rates()
    return Summary(
        rate_window_s=r.window_s, windowed_throughput_per_min=r.windowed_per_min,
        since_change_throughput_per_min=r.since_change_per_min, since_change_s=r.since_change_s, last_change=r.change,
        windowed_proofs=r.window_proofs, windowed_ci=r.window_ci, since_change_proofs=r.since_change_proofs,
        since_change_ci=r.since_change_ci,
        segments=segment_rows(s), device_syncs_recorded=s.schema_version >= 3 or s.schema_version == 0,
        partitions_abandoned=s.partitions_abandoned,
        abandoned=sorted(p.part for p in s.partitions.values() if p.abandoned)[:50],
        backend=s.backend, simulated=s.simulated, profile=s.profile, proved_log2=s.proved_log2,
        modelled_log2=s.modelled_log2, time_scale=scale, duration_s=dur, ended=s.ended, end_reason=s.end_reason,
        knobs=typed_knobs(s.knobs), knobs_at_start=typed_knobs(start_knobs(s)), partitions_ok=s.partitions_ok, partitions_unchecked=s.partitions_unchecked,
        partitions_failed=s.partitions_failed, partitions_cancelled=s.jobs.cancelled,
        proofs_ok=s.proofs_ok, proofs_failed=s.proofs_failed, proofs_unchecked=s.proofs_unchecked,
        all_proofs_verified=(s.proofs_ok > 0 and s.proofs_failed == s.proofs_unchecked == 0
                             and s.partitions_failed == s.partitions_unchecked == 0),
        fallbacks=s.fallbacks, ooms=s.ooms, stalls=s.stalls, mode_changes=s.mode_changes,
        ooms_retried=s.ops.oom_count("retried"), ooms_failed=s.ops.oom_count("failed") - s.ops.unsaid_count(),
        throughput_per_min=s.throughput_per_min(), steady_throughput_per_min=steady,
        modelled_throughput_per_min=(steady * scale) if scale > 0 else None,
        phases={k: PhaseSummary(count=v.count, mean=v.mean, max=v.max, total=v.total, failed=v.failed)
                for k, v in s.phase_stats.items()},
        gpus=gpus, hosts=[_host(h, dur) for h in s.hosts.values()],
        requeued=sum(h.requeued for h in s.hosts.values()), host_ram=summarize_host_ram(s.host_ram, s.knobs),
        startup=summarize_startup(s.startup), classes=summarize_queues(s.queues), keys=summarize_keys(s.keys),
        events=s.events, errors=errors[-10:],
        experiments=summarize_experiments(s.experiments))


def start_knobs(s: DashboardState) -> dict[str, str]:
    """The knobs as the run started (its RunStarted config, in the fold's text), in the order
    the knobs are at the end; a knob the config did not name (an older recording): as at the end."""
    return {k: str(s.config[k]) if k in s.config else v for k, v in s.knobs.items()}


def _host(h: HostState, dur: float) -> HostSummary:
    span = (h.left_t if h.left_t is not None else dur) - h.joined_t
    return HostSummary(host=h.host, node=h.node, gpus=h.gpus, partitions_done=h.done, partitions_failed=h.failed,
                       throughput_per_min=60.0 * h.done / span if span > 0 else 0.0, alive=h.alive, lost=h.lost,
                       requeued=h.requeued)
