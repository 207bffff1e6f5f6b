"""The figures of the operators' console the fold does not keep yet, each a small pure tracker
over the event stream, so the metrics exporter (prover/observe/metrics.py) and, later, a fold
concept compute them alike:

- OOMs by outcome (retried | failed; an older recording's unsaid ones count as failed);
- how long since a GPU phase last ended on each GPU while one runs there (a stalled GPU);
- the VRAM growth findings in force (VramGrowth growing until cleared);
- the latest GPU and host health (GpuHealth, HostHealth).
`figures(gpu)` gives thresholds.judge its inputs for one GPU (or the run)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prover import events as ev


@dataclass
class GpuProgress:
    open: set[tuple[str, str]] = field(default_factory=set)  # (part, phase) of GPU phases running now
    since: float = 0.0  # when the GPU last made progress (a GPU phase ended) or started to work

    def age(self, now: float) -> float:
        return max(0.0, now - self.since) if self.open else 0.0


@dataclass
class OpsFigures:
    t: float = 0.0
    ooms: dict[tuple[int, str, str], int] = field(default_factory=dict)  # (gpu, retried|failed, cause) -> count
    progress: dict[int, GpuProgress] = field(default_factory=dict)
    growth: dict[tuple[int, str, str], Any] = field(default_factory=dict)  # (gpu, series, owner) -> VramGrowth
    growth_seen: set[tuple[int, str, str]] = field(default_factory=set)  # every series ever found growing
    health: dict[int, Any] = field(default_factory=dict)  # gpu -> latest GpuHealth
    host: Any = None  # latest HostHealth

    def apply(self, e: Any) -> None:
        self.t = max(self.t, e.t)
        k = e.kind
        if k == "oom":
            key = (e.gpu, e.outcome or "failed", e.cause or "unknown")
            self.ooms[key] = self.ooms.get(key, 0) + 1
        elif k in ("phase_start", "phase_end") and e.gpu is not None:
            self._phase(e)
        elif k == "vram_growth":
            key = (e.gpu, e.series, e.owner)
            self.growth_seen.add(key)
            if e.state == "growing":
                self.growth[key] = e
            else:
                self.growth.pop(key, None)
        elif k == "gpu_health":
            self.health[e.gpu] = e
        elif k == "host_health":
            self.host = e

    def _phase(self, e: Any) -> None:
        g = self.progress.setdefault(e.gpu, GpuProgress())
        key = (e.part, e.phase.value)
        if isinstance(e, ev.PhaseStart):
            if e.impl == "cpu":  # CPU phases carry their worker's GPU too: not the GPU's progress
                return
            if not g.open:
                g.since = e.t
            g.open.add(key)
        elif key in g.open:
            g.open.discard(key)
            g.since = e.t

    def growth_slope(self, gpu: int) -> float:
        return max((f.slope for (g, _, _), f in self.growth.items() if g == gpu), default=0.0)

    def partitions_left(self, gpu: int) -> float | None:
        """Partitions until the budget at the fastest growth in force (None: nothing grows)."""
        left = [f.headroom / f.slope for (g, _, _), f in self.growth.items()
                if g == gpu and f.slope > 0 and f.headroom is not None]
        return min(left) if left else None

    def figures(self, gpu: int) -> dict[str, float | None]:
        """The thresholds' figures this tracker owns, for one GPU."""
        return {"gpu_progress_age_s": self.progress.get(gpu, GpuProgress()).age(self.t),
                "vram_growth": self.growth_slope(gpu) or None, "vram_partitions_left": self.partitions_left(gpu)}
