"""GetStatus from our fold and key ring, field for field (docs/cuzk.md says each one's source).

- gpus: every GPU of the run: its name; vram_total_bytes as GpuInfo said (NVML's total on
  CUDA, the profile's card on sim); vram_free_bytes NVML's free where NVML reads the card,
  else the budget less what the pool holds; the job whose partition holds `compute` now
  (the one on the GPU) and its kind.
- loaded_srs: every key size of the run, under the circuit id of each class that proves it:
  tier HOT (hot), WARM (loading), COLD (cold: in the key cache or not set up); size_bytes
  its host bytes (modelled on sim, as the host-RAM bar counts them); ref_count the
  partitions in flight with it.
- queues: per kind, proofs (sectors) pending (no partition started) and in progress.
- total_proofs_*: the jobs submitted over this wire that completed / failed.
- pinned_memory_*: page-locked host bytes held, and host_ram_budget (0: none set).
"""
from __future__ import annotations

from typing import Any

from prover.cuzk import proving_pb2 as pb
from prover.cuzk.kinds import BY_CLASS, KINDS, circuit_id
from prover.cuzk.jobs import JobTable
from prover.fold.host_ram import budget_of
from prover.fold.model import DashboardState

TIERS = {"hot": pb.SRSStatus.HOT, "loading": pb.SRSStatus.WARM, "cold": pb.SRSStatus.COLD}


def job_label(table: JobTable, part: str | None) -> str:
    """A partition's job: the cuzk job id where a client submitted it, else its sector (s5)."""
    if not part:
        return ""
    job = table.job_of(part)
    return job.job_id if job is not None else part.split("p", 1)[0]


def _gpus(s: DashboardState, table: JobTable) -> list[Any]:
    out = []
    for g, gs in sorted(s.gpus.items()):
        if gs.nvml and gs.device_used is not None:
            free = gs.total - gs.device_used
        else:
            free = gs.budget - max(gs.pool_reserved, gs.live_total)
        part = gs.locks["compute"].holder_part if "compute" in gs.locks else None
        cls = s.queues.part_cls.get(part or "", "")
        kind = BY_CLASS.get(cls)
        out.append(pb.GPUStatus(ordinal=g, name=gs.name, vram_total_bytes=max(0, gs.total),
                                vram_free_bytes=max(0, free), current_job_id=job_label(table, part),
                                current_proof_kind=kind.name if kind and part else ""))
    return out


def _queues(s: DashboardState) -> list[Any]:
    q = s.queues
    pending = {k.cls: 0 for k in KINDS}
    running = {k.cls: 0 for k in KINDS}
    for n, info in q.sectors.items():
        cq = q.classes.get(info.cls)
        if cq is None or info.cls not in pending:
            continue
        prefix = f"s{n}p"
        waiting = sum(1 for p in cq.queued if p.startswith(prefix))
        flying = any(p.startswith(prefix) for p in cq.in_flight)
        if waiting == info.left and not flying:
            pending[info.cls] += 1
        else:
            running[info.cls] += 1
    return [pb.QueueStatus(proof_kind=k.name, pending=pending[k.cls], in_progress=running[k.cls]) for k in KINDS]


def _srs(keys: Any, sizes: dict[str, int]) -> list[Any]:
    if keys is None:
        return []
    out = []
    for log2, state, nbytes, pins, _used in keys.entries():
        for k in KINDS:
            if sizes.get(k.cls) == log2:
                out.append(pb.SRSStatus(circuit_id=circuit_id(k, log2), tier=TIERS.get(state, pb.SRSStatus.COLD),
                                        size_bytes=max(0, nbytes), ref_count=max(0, pins)))
    return out


def status_response(s: DashboardState, table: JobTable, keys: Any, sizes: dict[str, int]) -> Any:
    hr = s.host_ram
    return pb.GetStatusResponse(
        gpus=_gpus(s, table), loaded_srs=_srs(keys, sizes), queues=_queues(s),
        total_proofs_completed=table.completed, total_proofs_failed=table.failed,
        uptime_seconds=max(0, int(s.t)), pinned_memory_bytes=max(0, hr.pinned_bytes),
        pinned_memory_limit_bytes=max(0, budget_of(s.knobs)))
