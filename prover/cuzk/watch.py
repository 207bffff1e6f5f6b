"""A cuzk daemon watched: its GetStatus and HTTP /status snapshots turned into our events, so
the one fold draws it and a recording of it replays (`c2tui attach --cuzk`, docs/cuzk.md).

    w = CuzkWatch()
    events = w.step(t, status, snap)     # t: seconds since watching began; snap: /status or None

What maps to what: each GPU a GpuInfo (vram_total_bytes as total and budget: cuzk has no VRAM
budget) and a VramSample a poll (used = total - free, NVML's words); each of /status's
gpu_workers a worker `g{gpu}w{id}`; each pipeline a sector (SectorSubmitted, source
`cuzk:JOB`) of its partitions; a partition's `synthesizing` a synthesis phase, `gpu` an MSM
phase on the GPU worker proving it (cuzk's GPU section, NTT and MSM, is one phase here),
`done` / `failed` its end (PartitionDone with synth_ms and gpu_ms, ProofResult unchecked: we
did not verify cuzk's proof); each SRS allocation host RAM held by `key`; the circuit ids it
holds at the start in RunStarted's config (`circuits`; proved_log2 0: cuzk gives no log2). A transition the
poll missed (two states in 500 ms) is filled in, in order, at the poll's time. A stubbed field
(cuzk's SRS sizes and pinned bytes are 0, every SRS HOT) is shown as the daemon says it, and
said once in a Note.
"""
from __future__ import annotations

from typing import Any

from prover import events as ev
from prover.cuzk.kinds import KINDS

CLASS_OF = {k.name: k.cls for k in KINDS}
ORDER = ("pending", "synthesizing", "synth_done", "gpu", "done")


class CuzkWatch:
    def __init__(self, address: str = "") -> None:
        self.address = address
        self.started = False
        self._sectors: dict[str, int] = {}  # job id -> sector
        self._parts: dict[str, str] = {}  # part -> last state seen
        self._worker_of: dict[str, str] = {}  # part -> the worker proving it
        self._srs: dict[str, int] = {}
        self._said_stubs = False
        self.gone: set[str] = set()

    def part_id(self, job: str, index: int) -> str | None:
        n = self._sectors.get(job)
        return None if n is None else f"s{n}p{index}"

    def job_of(self, sector: int) -> str | None:
        return next((j for j, n in self._sectors.items() if n == sector), None)

    def step(self, t: float, status: Any, snap: dict | None) -> list[Any]:
        out: list[Any] = []
        add = lambda cls, **kw: out.append(cls(t=t, **kw))  # noqa: E731
        if not self.started:
            self._start(add, status, snap)
        for g in status.gpus:
            used = max(0, g.vram_total_bytes - g.vram_free_bytes)
            add(ev.VramSample, gpu=g.ordinal, budget=g.vram_total_bytes, pool_reserved=used, pool_used=used,
                device_used=used, device_total=g.vram_total_bytes)
        self._stubs(add, status)
        if snap is not None:
            self._memory(add, snap)
            for p in snap.get("pipelines", []):
                self._pipeline(add, p, snap)
        return out

    def _start(self, add: Any, status: Any, snap: dict | None) -> None:
        self.started = True
        # cuzk names its sizes by circuit id (porep-32g; ours porep-2^8), never in constraints: the
        # log2 fields say 0, unknown, and `circuits` what it says (the header shows them); its lock
        # discipline and knobs it does not report at all
        ids = [s.circuit_id for s in status.loaded_srs] + [
            str(a.get("circuit_id", "")) for a in (snap or {}).get("allocations", {}).get("srs", [])]
        circuits = sorted({c[:64] for c in ids if c})[:16]
        add(ev.RunStarted, backend="cuda", simulated=False, profile="cuzk", proved_log2=0, modelled_log2=0,
            gpus=len(status.gpus), config={"source": "cuzk", "address": self.address, "circuits": circuits})
        for g in status.gpus:
            add(ev.GpuInfo, gpu=g.ordinal, name=g.name or f"GPU {g.ordinal}", total_bytes=g.vram_total_bytes,
                budget_bytes=g.vram_total_bytes, simulated=False, nvml=True)
        for w in (snap or {}).get("gpu_workers", []):
            add(ev.WorkerStarted, gpu=int(w["gpu_ordinal"]), worker=f"g{w['gpu_ordinal']}w{w['worker_id']}")
        if snap is not None:
            add(ev.HostRamInfo, total_bytes=int(snap.get("memory", {}).get("total_bytes", 0)), modelled=False, log2=0)
        add(ev.Note, level="info", text=f"watching the cuzk daemon at {self.address}" + ("" if snap else
            " (GetStatus only: give --status-url for its pipelines and workers)"))

    def _stubs(self, add: Any, status: Any) -> None:
        if self._said_stubs or not status.loaded_srs:
            return
        if all(s.size_bytes == 0 for s in status.loaded_srs) and status.pinned_memory_bytes == 0:
            self._said_stubs = True
            add(ev.Note, level="warn", text="this cuzk daemon reports every SRS as HOT with size 0 and pinned memory 0 "
                "(its GetStatus does not track them): shown as it says")

    def _memory(self, add: Any, snap: dict) -> None:
        for a in snap.get("allocations", {}).get("srs", []):
            cid, n = str(a.get("circuit_id", "?"))[:64], int(a.get("bytes", 0))
            if self._srs.get(cid) != n:
                self._srs[cid] = n
                add(ev.HostRam, owner="key", name=cid, bytes=n)

    def _pipeline(self, add: Any, p: dict, snap: dict) -> None:
        job = str(p.get("job_id", "?"))[:64]
        if job not in self._sectors:
            n = self._sectors[job] = len(self._sectors)
            cls = CLASS_OF.get(p.get("proof_kind", ""), "c2")
            total = int(p.get("total_partitions", len(p.get("partitions", []))))
            add(ev.SectorSubmitted, sector=n, partitions=total, proof_class=cls, source=f"cuzk:{job}")
            for i in range(total):
                add(ev.PartitionQueued, part=f"s{n}p{i}", sector=n, index=i, proof_class=cls)
        workers = {(w.get("current_job"), w.get("current_partition")): w for w in snap.get("gpu_workers", [])}
        for q in p.get("partitions", []):
            self._partition(add, job, q, workers.get((job, q.get("index"))))

    def _partition(self, add: Any, job: str, q: dict, worker: dict | None) -> None:
        part = self.part_id(job, int(q.get("index", 0)))
        state = q.get("state", "pending")
        old = self._parts.get(part or "", "pending")
        if part is None or old in ("done", "failed") or state == old:
            return
        if worker is not None:
            self._worker_of[part] = f"g{worker['gpu_ordinal']}w{worker['worker_id']}"
        w = self._worker_of.get(part, "cuzk")
        gpu = int(w[1:w.index("w")]) if w.startswith("g") else None
        synth, gms = (q.get("synth_ms") or 0) / 1000, (q.get("gpu_ms") or 0) / 1000
        at = ORDER.index(old) if old in ORDER else 0
        to = ORDER.index(state) if state in ORDER else len(ORDER)
        for s in ORDER[at + 1:to + 1]:  # every step passed since the last poll, in order
            if s == "synthesizing":
                add(ev.PhaseStart, part=part, phase=ev.Phase.synthesis, worker=w, gpu=None, impl="cpu")
            elif s == "synth_done":
                add(ev.PhaseEnd, part=part, phase=ev.Phase.synthesis, worker=w, gpu=None, duration=synth)
            elif s == "gpu":
                add(ev.PhaseStart, part=part, phase=ev.Phase.msm, worker=w, gpu=gpu, impl="cuda")
            elif s == "done":
                add(ev.PhaseEnd, part=part, phase=ev.Phase.msm, worker=w, gpu=gpu, duration=gms)
                add(ev.ProofResult, part=part, ok=True, checked=False, reason="proved by cuzk; not verified here")
                add(ev.PartitionDone, part=part, ok=True, seconds=synth + gms)
        if state == "failed":
            add(ev.PartitionDone, part=part, ok=False, seconds=synth + gms, reason="cuzk says failed")
        self._parts[part] = state
