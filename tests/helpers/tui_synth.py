"""A small deterministic discrete-event model of the pipeline that emits a plausible event
stream (the real contract types from prover.events), for TUI tests and benchmarks that must
not depend on the engine's timing: N GPUs x W workers, the two locks, pre-stage / fallback,
VRAM samples, progress, proofs, a mode switch. Not a prover: only the shape of its events.
"""
from __future__ import annotations

import heapq
import random
from typing import Iterator

from prover import events as ev
from prover.events import Phase

GiB = 1 << 30
# modelled seconds per phase (cuzk notes, RTX 5070 Ti, 2^27)
DUR = {
    Phase.synthesis: 2.2, Phase.prep_msm: 1.9, Phase.prestage: 0.018, Phase.ntt_h: 0.69,
    Phase.msm: 0.73, Phase.b_g2_msm: 0.48, Phase.assemble: 0.05, Phase.verify: 0.12,
}
D_A, D_BC = 4 * GiB, 8 * GiB


class _Gpu:
    def __init__(self, i: int, budget: int):
        self.i = i
        self.budget = budget
        self.holder: dict[str, str | None] = {"mem": None, "compute": None}
        self.queue: dict[str, list] = {"mem": [], "compute": []}
        self.live = 0
        self.reserved = 0
        self.kernel_spans: list[tuple[float, float]] = []
        self.kernel_end = 0.0


class Synth:
    def __init__(self, gpus: int = 1, workers_per_gpu: int = 3, sectors: int = 2,
                 partitions: int = 10, lock_mode: str = "two-lock", mem_sync: str = "stream",
                 budget: int = 24 * GiB, seed: int = 0, switches: list[tuple[float, str, str]] | None = None,
                 progress_steps: int = 4, sample_every: float = 0.25, fail_every: int = 0):
        self.rng = random.Random(seed)
        self.n_gpus, self.wpg = gpus, workers_per_gpu
        self.lock_mode, self.mem_sync = lock_mode, mem_sync
        self.gpus = [_Gpu(i, budget) for i in range(gpus)]
        self.out: list[ev.Event] = []
        self.heap: list = []
        self.seq = 0
        self.now = 0.0
        self.todo = [(s, p) for s in range(sectors) for p in range(partitions)]
        self.switches = sorted(switches or [])
        self.progress_steps = progress_steps
        self.sample_every = sample_every
        self.fail_every = fail_every
        self.done = 0
        self.budget = budget
        self.sectors, self.partitions = sectors, partitions

    # --- plumbing -----------------------------------------------------------------------
    def emit(self, e: ev.Event) -> None:
        self.out.append(e)

    def _push(self, t: float, proc) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, proc))

    def _step(self, proc) -> None:
        try:
            cmd = next(proc)
        except StopIteration:
            return
        op = cmd[0]
        if op == "sleep":
            self._push(self.now + cmd[1], proc)
        elif op == "lock":
            g, name, worker = cmd[1], cmd[2], cmd[3]
            if g.holder[name] is None:
                g.holder[name] = worker
                self._push(self.now, proc)
            else:
                g.queue[name].append((worker, proc))
        elif op == "unlock":
            g, name = cmd[1], cmd[2]
            g.holder[name] = None
            if g.queue[name]:
                worker, waiter = g.queue[name].pop(0)
                g.holder[name] = worker
                self._push(self.now, waiter)
            self._push(self.now, proc)

    # --- processes ----------------------------------------------------------------------
    def _phase(self, part: str, phase: Phase, worker: str, gpu: int | None, dur: float, impl: str = "sim"):
        self.emit(ev.PhaseStart(t=self.now, part=part, phase=phase, worker=worker, gpu=gpu, impl=impl))
        steps = self.progress_steps if dur > 0.3 else 1
        for k in range(1, steps):
            yield ("sleep", dur / steps)
            self.emit(ev.PhaseProgress(t=self.now, part=part, phase=phase, frac=k / steps))
        yield ("sleep", dur / steps)
        self.emit(ev.PhaseEnd(t=self.now, part=part, phase=phase, worker=worker, gpu=gpu, duration=dur))

    def _jit(self, d: float) -> float:
        return d * self.rng.uniform(0.9, 1.15)

    def _lock(self, g: _Gpu, name: str, worker: str, part: str):
        t0 = self.now
        self.emit(ev.LockRequested(t=t0, gpu=g.i, lock=name, worker=worker, part=part))
        yield ("lock", g, name, worker)
        self.emit(ev.LockAcquired(t=self.now, gpu=g.i, lock=name, worker=worker, part=part, wait=self.now - t0))
        return self.now

    def _unlock(self, g: _Gpu, name: str, worker: str, part: str, since: float):
        self.emit(ev.LockReleased(t=self.now, gpu=g.i, lock=name, worker=worker, part=part, hold=self.now - since))
        yield ("unlock", g, name)

    def _alloc(self, g: _Gpu, worker: str, part: str):
        for name, b in (("d_a", D_A), ("d_bc", D_BC)):
            g.live += b
            g.reserved = max(g.reserved, g.live)
            self.emit(ev.Alloc(t=self.now, gpu=g.i, owner=worker, part=part, name=name, bytes=b))

    def _free(self, g: _Gpu, worker: str, part: str):
        for name, b in (("d_a", D_A), ("d_bc", D_BC)):
            g.live -= b
            self.emit(ev.Free(t=self.now, gpu=g.i, owner=worker, part=part, name=name, bytes=b))

    def _worker(self, g: _Gpu, worker: str):
        self.emit(ev.WorkerStarted(t=self.now, gpu=g.i, worker=worker))
        while self.todo:
            s, p = self.todo.pop(0)
            part = f"s{s}p{p}"
            yield from self._phase(part, Phase.synthesis, worker, None, self._jit(DUR[Phase.synthesis]))
            yield from self._phase(part, Phase.prep_msm, worker, None, self._jit(DUR[Phase.prep_msm]))
            # --- GPU section --------------------------------------------------------------
            prestaged = False
            if self.lock_mode == "single":
                m0 = yield from self._lock(g, "mem", worker, part)
                c0 = yield from self._lock(g, "compute", worker, part)
                self.emit(ev.PhaseStart(t=self.now, part=part, phase=Phase.prestage, worker=worker, gpu=g.i, impl="sim"))
                self._alloc(g, worker, part)
                yield ("sleep", DUR[Phase.prestage])
                self.emit(ev.PhaseEnd(t=self.now, part=part, phase=Phase.prestage, worker=worker, gpu=g.i, duration=DUR[Phase.prestage]))
            else:
                m0 = yield from self._lock(g, "mem", worker, part)
                if g.live + D_A + D_BC <= g.budget:
                    self.emit(ev.PhaseStart(t=self.now, part=part, phase=Phase.prestage, worker=worker, gpu=g.i, impl="sim"))
                    d = DUR[Phase.prestage]
                    if self.mem_sync == "device":  # device-global sync waits for running kernels
                        d += max(0.0, g.kernel_end - self.now)
                        g.reserved = g.live
                    self._alloc(g, worker, part)
                    yield ("sleep", d)
                    self.emit(ev.PhaseEnd(t=self.now, part=part, phase=Phase.prestage, worker=worker, gpu=g.i, duration=d))
                    prestaged = True
                else:
                    self.emit(ev.Fallback(t=self.now, gpu=g.i, part=part, worker=worker,
                                          reason=f"{(g.budget - g.live) >> 20} MiB free < {(D_A + D_BC) >> 20} MiB"))
                yield from self._unlock(g, "mem", worker, part, m0)
                c0 = yield from self._lock(g, "compute", worker, part)
                if not prestaged:
                    self.emit(ev.PhaseStart(t=self.now, part=part, phase=Phase.prestage, worker=worker, gpu=g.i, impl="sim"))
                    self._alloc(g, worker, part)
                    yield ("sleep", 0.35)  # unstaged alloc + upload under compute: the slow path
                    self.emit(ev.PhaseEnd(t=self.now, part=part, phase=Phase.prestage, worker=worker, gpu=g.i, duration=0.35))
            k0 = self.now
            dk = self._jit(DUR[Phase.ntt_h]) + self._jit(DUR[Phase.msm])
            g.kernel_end = k0 + dk
            g.kernel_spans.append((k0, k0 + dk))
            yield from self._phase(part, Phase.ntt_h, worker, g.i, DUR[Phase.ntt_h])
            yield from self._phase(part, Phase.msm, worker, g.i, dk - DUR[Phase.ntt_h])
            self._free(g, worker, part)
            yield from self._unlock(g, "compute", worker, part, c0)
            if self.lock_mode == "single":
                yield from self._unlock(g, "mem", worker, part, m0)
            # --- CPU tail ---------------------------------------------------------------
            yield from self._phase(part, Phase.b_g2_msm, worker, None, self._jit(DUR[Phase.b_g2_msm]))
            yield from self._phase(part, Phase.assemble, worker, None, DUR[Phase.assemble])
            yield from self._phase(part, Phase.verify, worker, None, DUR[Phase.verify])
            self.done += 1
            ok = not (self.fail_every and self.done % self.fail_every == 0)
            self.emit(ev.ProofResult(t=self.now, part=part, ok=ok, reason=None if ok else "pairing check failed"))
            self.emit(ev.PartitionDone(t=self.now, part=part, ok=ok, seconds=self.now, reason=None if ok else "proof did not verify"))
        self.emit(ev.WorkerStopped(t=self.now, gpu=g.i, worker=worker, reason="queue empty"))

    def _sampler(self, g: _Gpu):
        while True:
            yield ("sleep", self.sample_every)
            lo = self.now - self.sample_every
            busy = sum(max(0.0, min(b, self.now) - max(a, lo)) for a, b in g.kernel_spans[-4:])
            self.emit(ev.VramSample(t=self.now, gpu=g.i, budget=g.budget, pool_reserved=max(g.reserved, g.live),
                                    pool_used=g.live, util=min(1.0, busy / self.sample_every)))

    def _switcher(self):
        last = 0.0
        for t, knob, new in self.switches:
            yield ("sleep", t - last)
            last = t
            old = getattr(self, knob)
            setattr(self, knob, new)
            self.emit(ev.ModeChange(t=self.now, knob=knob, old=str(old), new=str(new), source="switch"))

    def run(self, until: float = 1e9) -> list[ev.Event]:
        self.emit(ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="rtx5070ti-16g", proved_log2=10,
                                modelled_log2=27, gpus=self.n_gpus,
                                config={"lock_mode": self.lock_mode, "mem_sync": self.mem_sync,
                                        "workers_per_gpu": self.wpg, "prestage": "on", "b_g2": "cpu",
                                        "paused": "false"}))
        for g in self.gpus:
            self.emit(ev.GpuInfo(t=0.0, gpu=g.i, name="RTX 5070 Ti (modelled)", total_bytes=16 * GiB,
                                 budget_bytes=g.budget, simulated=True))
        for s, p in self.todo:
            self.emit(ev.PartitionQueued(t=0.0, part=f"s{s}p{p}", sector=s, index=p))
        for g in self.gpus:
            for w in range(self.wpg):
                # stagger start so workers do not march in lock-step
                self._push(0.05 * w + 0.01 * g.i, self._worker(g, f"g{g.i}w{w}"))
            self._push(0.0, self._sampler(g))
        self._push(0.0, self._switcher())
        while self.heap:
            t, _, proc = heapq.heappop(self.heap)
            if t > until:
                break
            self.now = t
            self._step(proc)
            if not self.todo and all(g.holder["compute"] is None for g in self.gpus) and self.done >= self.sectors * self.partitions:
                break
        self.emit(ev.RunEnded(t=self.now, reason="done" if self.done >= self.sectors * self.partitions else "duration"))
        return self.out


def synth_events(**kw) -> list[ev.Event]:
    until = kw.pop("until", 1e9)
    return Synth(**kw).run(until=until)


def iter_synth(**kw) -> Iterator[ev.Event]:
    yield from synth_events(**kw)
