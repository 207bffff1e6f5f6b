"""cuzk's HTTP `/status` JSON (its cuzk-core/src/status.rs StatusSnapshot), made from our fold,
job table and key ring, so a tool that polls a cuzk daemon can poll us.

Shape (the keys and types are cuzk's): uptime_secs; memory {total_bytes, used_bytes,
available_bytes} (host RAM: host_ram_budget, else the host's size); synthesis
{max_concurrent: workers, active: partitions in synthesis}; pipelines[] (a sector in flight,
or ended within PIPELINE_KEEP_S: job_id, proof_kind, started_secs_ago, total_partitions,
partitions_done, partitions[] {index, state pending|synthesizing|synth_done|gpu|done|failed,
synth_ms, gpu_ms}); gpu_workers[] (each worker: worker_id, gpu_ordinal, state idle|proving
(proving: in its GPU section, as cuzk's GPU workers), current_job, current_partition,
busy_secs); allocations {srs[] {circuit_id, bytes, last_used_secs_ago, evictable}, pce: []};
counters {total_completed, total_failed, completed_by_kind, failed_by_kind, queue_depth};
buffers {synth_in_flight, provers_in_flight, aux_in_flight, shells_in_flight,
pending_handles} (aux and shells are cuzk's own buffers: 0 here, we have none).
"""
from __future__ import annotations

from typing import Any

from prover.cuzk.jobs import JobTable
from prover.cuzk.kinds import BY_CLASS, KINDS, circuit_id
from prover.cuzk.status_rpc import job_label
from prover.fold.host_ram import budget_of
from prover.fold.model import DashboardState

PIPELINE_KEEP_S = 30.0  # cuzk keeps a finished job this long in /status
GPU_PHASES = ("prestage", "ntt_h", "msm")


def _ms(span: list[float | None] | None, now: float) -> int | None:
    if not span or span[0] is None:
        return None
    return int(max(0.0, ((span[1] if span[1] is not None else now) - span[0])) * 1000)


def _gpu_ms(p: Any, now: float) -> int | None:
    spans = [_ms(p.phases.get(ph), now) for ph in GPU_PHASES]
    got = [x for x in spans if x is not None]
    return sum(got) if got else None


def _state(p: Any) -> str:
    if p.done_t is not None:
        return "done" if p.ok and p.verified is not False else "failed"
    if p.current == "synthesis":
        return "synthesizing"
    if p.current in GPU_PHASES or (p.current == "b_g2_msm" and p.impl not in (None, "cpu")):
        return "gpu"
    return "synth_done" if "synthesis" in p.phases else "pending"


def _pipelines(s: DashboardState, table: JobTable) -> list[dict]:
    by_sector: dict[int, list[Any]] = {}
    for p in s.partitions.values():
        by_sector.setdefault(p.sector, []).append(p)
    out = []
    for n, parts in sorted(by_sector.items()):
        info = s.queues.sectors.get(n) or s.queues.finished.get(n)
        ended = [p.done_t for p in parts if p.done_t is not None]
        if n not in s.queues.sectors and (not ended or s.t - max(ended) > PIPELINE_KEEP_S):
            continue
        parts.sort(key=lambda p: p.index)
        kind = BY_CLASS.get(info.cls if info else "c2")
        out.append({"job_id": job_label(table, parts[0].part), "proof_kind": kind.name if kind else "",
                    "started_secs_ago": round(max(0.0, s.t - (info.t if info else parts[0].queued_t)), 3),
                    "total_partitions": len(parts), "partitions_done": sum(p.done_t is not None for p in parts),
                    "partitions": [{"index": p.index, "state": _state(p), "synth_ms": _ms(p.phases.get("synthesis"), s.t),
                                    "gpu_ms": _gpu_ms(p, s.t)} for p in parts]})
    return out


def _workers(s: DashboardState, table: JobTable) -> list[dict]:
    on: dict[str, Any] = {p.worker: p for p in s.partitions.values() if p.worker and p.done_t is None}
    out: list[dict] = []
    for g, gs in sorted(s.gpus.items()):
        for w in gs.workers:
            p = on.get(w)
            gpu = p is not None and _state(p) == "gpu"
            if p is None or not gpu:
                out.append({"worker_id": len(out), "gpu_ordinal": g, "state": "idle", "current_job": None,
                            "current_partition": None, "busy_secs": None})
                continue
            t0 = min((sp[0] for ph, sp in p.phases.items() if ph in GPU_PHASES and sp and sp[0] is not None),
                     default=s.t)
            out.append({"worker_id": len(out), "gpu_ordinal": g, "state": "proving",
                        "current_job": job_label(table, p.part), "current_partition": p.index,
                        "busy_secs": round(s.t - t0, 3)})
    return out


def _srs(keys: Any, sizes: dict[str, int], now: float) -> list[dict]:
    out = []
    for log2, state, nbytes, pins, used_t in (keys.entries() if keys is not None else []):
        if state == "cold":
            continue
        for k in KINDS:
            if sizes.get(k.cls) == log2:
                out.append({"circuit_id": circuit_id(k, log2), "bytes": nbytes,
                            "last_used_secs_ago": round(max(0.0, now - used_t), 3),
                            "evictable": state == "hot" and pins == 0})
    return out


def status_json(s: DashboardState, table: JobTable, keys: Any, sizes: dict[str, int], clock_now: float) -> dict:
    """The snapshot as a JSON-ready dict (`clock_now`: the engine's clock, for keys' ages)."""
    hr = s.host_ram
    total = budget_of(s.knobs) or hr.total
    parts = [p for p in s.partitions.values() if p.done_t is None]
    synth = sum(p.current == "synthesis" for p in parts)
    queued = sum(len(c.queued) for c in s.queues.classes.values())
    flying = sum(len(c.in_flight) for c in s.queues.classes.values())
    workers = sum(len(g.workers) for g in s.gpus.values())
    return {
        "uptime_secs": round(s.t, 3),
        "memory": {"total_bytes": total, "used_bytes": hr.used, "available_bytes": max(0, total - hr.used)},
        "synthesis": {"max_concurrent": workers, "active": synth},
        "pipelines": _pipelines(s, table),
        "gpu_workers": _workers(s, table),
        "allocations": {"srs": _srs(keys, sizes, clock_now), "pce": []},
        "counters": {"total_completed": table.completed, "total_failed": table.failed,
                     "completed_by_kind": dict(table.completed_by), "failed_by_kind": dict(table.failed_by),
                     "queue_depth": queued},
        "buffers": {"synth_in_flight": synth, "provers_in_flight": flying, "aux_in_flight": 0,
                    "shells_in_flight": 0, "pending_handles": queued},
    }
