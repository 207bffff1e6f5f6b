"""The operators' console in the fold (issue 36): the figures the alert thresholds judge
(prover/observe/thresholds.py) that the core does not keep, so the screen, `status` and the
metrics exporter compute them from one place:

- OOMs by GPU, outcome (retried | failed; an older recording's unsaid ones count as failed)
  and cause;
- when things happened recently (fallbacks, partitions done, OOMs by outcome and cause, failed
  proofs, stalls, missed deadlines, device-sync and host-RAM wait seconds), for the thresholds'
  windows (10 or 15 min);
- how long since a GPU phase last ended on each GPU while one runs there (a stalled GPU);
- the VRAM growth findings in force (VramGrowth growing until cleared), the owner named;
- the latest GPU and host health (GpuHealth, HostHealth) and why each proof class waits
  (QueueWait).

The state's `ops` is one of these (its concept: CONCEPT below). prover/observe/ops_figures.py
is this same tracker for the exporter, which feeds it event by event (`apply`)."""
from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.world import World

KEEP_S = 900.0  # the longest threshold window (15 min): older times are dropped
KEEP_N = 4096  # and at most this many of each kind (a storm of OOMs stays bounded)
UNEXPLAINED = ("leak", "contention", "device", "unknown")  # OOM causes no switch or budget explains


@dataclass
class GpuProgress:
    open: set[tuple[str, str]] = field(default_factory=set)  # (part, phase) of GPU phases running now
    since: float = 0.0  # when the GPU last made progress (a GPU phase ended) or started to work

    def age(self, now: float) -> float:
        return max(0.0, now - self.since) if self.open else 0.0


@dataclass
class OpsState:
    t: float = 0.0
    ooms: dict[tuple[int, str, str], int] = field(default_factory=dict)  # (gpu, retried|failed, cause) -> count
    progress: dict[int, GpuProgress] = field(default_factory=dict)
    growth: dict[tuple[int, str, str], Any] = field(default_factory=dict)  # (gpu, series, owner) -> VramGrowth
    growth_seen: set[tuple[int, str, str]] = field(default_factory=set)  # every series ever found growing
    health: dict[int, Any] = field(default_factory=dict)  # gpu -> latest GpuHealth
    host: Any = None  # latest HostHealth
    waits: dict[str, Any] = field(default_factory=dict)  # proof class -> its QueueWait while it waits
    # what -> (t, gpu or None, amount) of the last KEEP_S seconds
    recent: dict[str, deque[tuple[float, int | None, float]]] = field(default_factory=dict)
    host_waiting: dict[str, float] = field(default_factory=dict)  # worker -> since (held back for host RAM now)
    unsaid: dict[int, int] = field(default_factory=dict)  # gpu -> OOMs whose outcome was not said (counted as failed)

    # --- the exporter's entry (the fold dispatches by type to the same code) --------------
    def apply(self, e: Any) -> None:
        self.t = max(self.t, e.t)  # the exporter's clock (the fold's screen reads the state's t)
        h = _BY_KIND.get(e.kind)
        if h is not None:
            h(self, e, None)

    def seen(self, what: str, t: float, gpu: int | None = None, amount: float = 1.0) -> None:
        q = self.recent.setdefault(what, deque(maxlen=KEEP_N))
        q.append((t, gpu, amount))
        while q and q[0][0] < t - KEEP_S:
            q.popleft()

    def amount(self, what: str, window: float, gpu: int | None = None, now: float | None = None) -> float:
        """The sum of `what` over the last `window` seconds (one GPU's, or the run's)."""
        now = self.t if now is None else now
        return sum(a for t, g, a in self.recent.get(what, ()) if t > now - window and (gpu is None or g == gpu))

    def least(self, what: str, window: float, gpu: int | None = None, now: float | None = None) -> float | None:
        """The smallest sample of `what` over the last `window` seconds (None: none, or the
        samples do not reach back that far: held throughout is not known yet)."""
        now = self.t if now is None else now
        q = [(t, a) for t, g, a in self.recent.get(what, ()) if gpu is None or g == gpu]
        if not q or q[0][0] > now - window:
            return None
        return min((a for t, a in q if t >= now - window), default=q[-1][1])

    def oom_count(self, outcome: str | None = None, gpu: int | None = None) -> int:
        return sum(n for (g, out, _), n in self.ooms.items()
                   if (outcome is None or out == outcome) and (gpu is None or g == gpu))

    def unsaid_count(self, gpu: int | None = None) -> int:
        return sum(n for g, n in self.unsaid.items() if gpu is None or g == gpu)

    def growth_slope(self, gpu: int) -> float:
        return max((f.slope for (g, _, _), f in self.growth.items() if g == gpu), default=0.0)

    def growing(self, gpu: int | None = None) -> list[Any]:
        """The VramGrowth findings in force (one GPU's, or all), fastest first."""
        return sorted((f for (g, _, _), f in self.growth.items() if gpu is None or g == gpu), key=lambda f: -f.slope)

    def partitions_left(self, gpu: int) -> float | None:
        """Partitions until the budget at the fastest growth in force (None: nothing grows)."""
        left = [f.headroom / f.slope for (g, _, _), f in self.growth.items()
                if g == gpu and f.slope > 0 and f.headroom is not None]
        return min(left) if left else None

    def figures(self, gpu: int) -> dict[str, float | None]:
        """The thresholds' figures this tracker owns alone, for one GPU."""
        return {"gpu_progress_age_s": self.progress.get(gpu, GpuProgress()).age(self.t),
                "vram_growth": self.growth_slope(gpu) or None, "vram_partitions_left": self.partitions_left(gpu)}


# --- handlers (own, event, world: None when fed by the exporter) ---------------------------

def _oom(o: OpsState, e: ev.Oom, _: Any) -> None:
    out, cause = e.outcome or "failed", e.cause or "unknown"
    o.ooms[(e.gpu, out, cause)] = o.ooms.get((e.gpu, out, cause), 0) + 1
    if e.outcome is None:  # a recording from before outcomes were said: counted, never judged on screen
        o.unsaid[e.gpu] = o.unsaid.get(e.gpu, 0) + 1
        return
    o.seen(f"oom_{out}", e.t, e.gpu)
    if cause != "injected":  # fault injection is expected: it never fires an alert
        o.seen("oom_unexplained" if cause in UNEXPLAINED else f"oom_{cause}", e.t, e.gpu)


def _phase(o: OpsState, e: Any, _: Any) -> None:
    if e.gpu is None:
        return
    g = o.progress.get(e.gpu)
    if g is None:
        g = o.progress[e.gpu] = GpuProgress()
    key = (e.part, e.phase)  # the hot path: no enum .value, no isinstance
    if e.kind == "phase_start":
        if e.impl == "cpu":  # CPU phases carry their worker's GPU too: not the GPU's progress
            return
        if not g.open:
            g.since = e.t
        g.open.add(key)
    elif key in g.open:
        g.open.discard(key)
        g.since = e.t


def _growth(o: OpsState, e: ev.VramGrowth, w: Any) -> None:
    key = (e.gpu, e.series, e.owner)
    o.growth_seen.add(key)
    if e.state == "growing":
        if key not in o.growth and w is not None:  # the fold (not the exporter): said once in the log
            w.note("warn", f"gpu{e.gpu} VRAM of {e.owner} growing {e.slope / 2**20:.0f} MiB a partition "
                           f"({e.series}, {e.window} marks, p={e.p:.3f})", e)
        o.growth[key] = e
    else:
        o.growth.pop(key, None)


def _gpu_health(o: OpsState, e: ev.GpuHealth, _: Any) -> None:
    o.health[e.gpu] = e


def _host_health(o: OpsState, e: ev.HostHealth, _: Any) -> None:
    o.host = e


def _queue_wait(o: OpsState, e: ev.QueueWait, _: Any) -> None:
    if e.reason and e.waiting:
        o.waits[e.proof_class] = e
    else:
        o.waits.pop(e.proof_class, None)


def _counted(what: str, amount: str | None = None, gpu: bool = True) -> Any:
    def h(o: OpsState, e: Any, _: Any) -> None:
            o.seen(what, e.t, getattr(e, "gpu", None) if gpu else None, float(getattr(e, amount)) if amount else 1.0)
    return h


def _proof(o: OpsState, e: ev.ProofResult, _: Any) -> None:
    if e.checked and not e.ok:
        o.seen("proof_failed", e.t)


def _vram_sample(o: OpsState, e: ev.VramSample, w: Any) -> None:
    """Live VRAM's share of the budget at each sample: a rule's `for:` asks it held throughout."""
    if w is None or not e.budget:
        return
    share = w.gpu(e.gpu).live_bytes / e.budget
    q = o.recent.get(f"vram_live_share/{e.gpu}")
    if q and q[-1][0] > e.t - 1.0:  # one a second at most (the least of it): 900 a GPU in the window
        t0, g, a = q[-1]
        q[-1] = (t0, g, min(a, share))
    else:
        o.seen(f"vram_live_share/{e.gpu}", e.t, e.gpu, share)


def _host_wait(o: OpsState, e: ev.HostRamWait, _: Any) -> None:
    o.host_waiting.setdefault(e.worker, e.t)


def _host_admit(o: OpsState, e: ev.HostRamAdmit, _: Any) -> None:
    o.host_waiting.pop(e.worker, None)
    o.seen("host_ram_wait", e.t, None, e.wait)


HANDLERS: dict[type[ev._Ev], Any] = {
    ev.Oom: _oom, ev.PhaseStart: _phase, ev.PhaseEnd: _phase, ev.VramGrowth: _growth,
    ev.GpuHealth: _gpu_health, ev.HostHealth: _host_health, ev.QueueWait: _queue_wait,
    ev.Fallback: _counted("fallback"), ev.PartitionDone: _counted("done", gpu=False), ev.ProofResult: _proof,
    ev.Stall: _counted("stall", gpu=False), ev.DeadlineMissed: _counted("deadline_missed", gpu=False),
    ev.DeviceSyncEnd: _counted("device_sync", "duration"), ev.HostRamWait: _host_wait, ev.HostRamAdmit: _host_admit,
    ev.VramSample: _vram_sample,
}
_BY_KIND = {t.model_fields["kind"].default: h for t, h in HANDLERS.items()}


def _view(o: OpsState, now: float) -> OpsState:
    """The events kept are frozen (shared); the containers are copied."""
    c = copy.copy(o)
    c.ooms, c.growth, c.growth_seen = dict(o.ooms), dict(o.growth), set(o.growth_seen)
    c.health, c.waits, c.host_waiting, c.unsaid = dict(o.health), dict(o.waits), dict(o.host_waiting), dict(o.unsaid)
    c.progress = {g: GpuProgress(set(p.open), p.since) for g, p in o.progress.items()}
    c.recent = {k: deque(q, maxlen=q.maxlen) for k, q in o.recent.items()}
    return c


CONCEPT = Concept("ops", OpsState, HANDLERS, view=_view)
