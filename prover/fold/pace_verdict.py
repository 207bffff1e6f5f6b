"""What sets a GPU's pace, read from where its time and its workers' time went (`Work`, made by
the fold's pace concept, prover/fold/pace.py): the verdict (`Pace`) and its words.

The GPU does a partition's work only under its `compute` lock, so the share of the span the
lock was held is the GPU's busy share. Held nearly all the time (>= GPU_BOUND_SHARE), the GPU
bounds the rate, unless the holder spent a good part of its holds waiting for its own prep_msm
(single's barrier: the GPU idles under the lock), which then sets the pace. Held less, the GPU
sat idle while nobody waited for it (a free lock is taken at once), so the workers were
somewhere else: the pace is set by where they spent their time, the largest of
  - a host phase (synthesis, prep_msm, b_g2_msm, assemble, verify): host-bound, that phase;
  - a wait for host RAM (the host_ram_budget holding workers back): host-bound, host_ram;
  - a wait for a lock other than compute (the seed's device sync under mem): lock-bound;
  - the pre-stage (alloc + upload): upload-bound;
  - none of them (no partition to prove): feed-bound.
Host-bound, the host's cores say whether more workers can help: busy (>= CORES_SATURATED,
HostHealth's per-core shares) they cannot, and no discipline can either (it orders the GPU
section, which is not what waits). That is the line an operator with a smaller host reads.
"""
from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field, field_serializer

from prover.disciplines import COMPUTE

GPU_BOUND_SHARE = 0.85  # compute held at least this share of the span: the GPU sets the pace
CORES_SATURATED = 0.85  # host cores busy at least this share: more workers cannot help
BUSY_HOLD = 0.8  # kernels fill this share of the hold: nothing but faster kernels helps
PREP_WAIT_OF_HOLD = 0.25  # holds spent this share waiting for prep_msm: prep_msm under the lock sets the pace
HOST_PHASES = ("synthesis", "prep_msm", "b_g2_msm", "assemble", "verify")
# beside the worker's activity: prep_msm on a thread of its own; r1cs, a sub-phase, inside the pre-stage
BESIDE = frozenset({"prep_msm", "r1cs"})
UPLOAD = "prestage"
B_G2_GPU = "b_g2_msm_gpu"  # B over G2 run under compute (b_g2=gpu): a kernel, not host work
KERNELS = ("ntt_h", "msm", B_G2_GPU, "r1cs")  # the GPU section's kernel phases (r1cs: abc gpu's products)
PREP_WAIT = "wait:prep_msm"  # the holder between its NTT-H and its MSMs, waiting for its prep_msm (the GPU idles)
HOST_RAM_WAIT = "wait:host_ram"  # a worker held back by the host-RAM budget (HostRamWait ... HostRamAdmit)


class Pace(BaseModel):
    """What sets one GPU's pace over `span_s` (the window, or the run)."""

    gpu: int
    span_s: float = Field(description="seconds read (the window, shorter early in a run)")
    bound: str = Field(description="gpu | host | lock | upload | feed | settling")
    what: str = Field("", description="host: the phase; lock: the lock waited for; else ''")
    compute_share: float = Field(description="share of the span the compute lock was held (GPU busy)")
    kernel_share: float = Field(0.0, description="share of the span in the GPU section's kernel phases")
    shares: dict[str, float] = Field(default_factory=dict, description="activity -> share of the workers' time")
    per_partition_s: dict[str, float] = Field(default_factory=dict, description="activity -> mean seconds a span")
    gpu_section_s: float | None = Field(None, description="mean compute hold: the GPU's time a partition")
    workers: float = Field(0.0, description="workers on the GPU (mean over a run)")
    cores_busy: float | None = Field(None, description="host cores' mean busy share (HostHealth; None: not sampled)")
    cores: int | None = None
    modelled_host: bool = Field(False, description="the host phases' times are the profile's (a modelled run)")

    @field_serializer("span_s", "compute_share", "kernel_share", "gpu_section_s", "workers", "cores_busy")
    def _round(self, v: float | None) -> float | None:  # rounded where it is written out, not at every view
        return None if v is None else round(v, 4)

    @field_serializer("shares", "per_partition_s")
    def _round_all(self, v: dict[str, float]) -> dict[str, float]:
        return {k: round(x, 4) for k, x in v.items()}

    @property
    def gpu_per_min(self) -> float | None:
        """What the GPU alone could prove a minute (60 / its time a partition)."""
        return 60.0 / self.gpu_section_s if self.gpu_section_s else None

    def headline(self) -> str:
        """"host-bound: synthesis", "GPU-bound", "lock-bound: wait:mem", ..."""
        if self.bound == "gpu":
            return "GPU-bound"
        return f"{self.bound}-bound: {self.what}" if self.what else ("settling" if self.bound == "settling"
                                                                      else f"{self.bound}-bound")

    def sentence(self) -> str:
        """The verdict in one line of words (summary, status): what bounds, the GPU's busy share, why."""
        if self.bound == "settling":
            return f"settling ({self.span_s:.0f} s read from the first GPU section on)"
        per = self.per_partition_s.get(self.what) if self.what else None
        head = self.headline() + (f" {per:.2f} s a partition" if per is not None else "")
        gpu = f", its section {self.gpu_section_s:.2f} s a partition" if self.gpu_section_s else ""
        return (f"{head}; GPU busy {self.compute_share:.0%} (compute held; kernels {self.kernel_share:.0%}{gpu}) "
                f"over {self.span_s:.0f} s: {self.why()}")

    def short_why(self) -> str:
        """why() in a few words, for one panel line."""
        cores = "" if self.cores_busy is None else f"cores {self.cores_busy:.0%}: "
        if self.bound == "gpu":
            return "host work won't help" if self.busy_hold() else "kernels fill <80% of the hold"
        if self.bound == "host" and self.what == "prep_msm" and self.compute_share >= GPU_BOUND_SHARE:
            return "GPU waits for prep_msm in its lock"
        if self.bound == "host" and self.what == "host_ram":
            return "host_ram_budget holds workers back"
        if self.bound == "host" and self.modelled_host:
            return "modelled host times: more workers may help"
        if self.bound == "host":
            saturated = self.cores_busy is not None and self.cores_busy >= CORES_SATURATED
            return cores + ("workers, disciplines won't help" if saturated else "more host_threads may help")
        return {"lock": "a discipline or mem_sync can help", "upload": "uploads idle the GPU",
                "feed": "nothing queued"}.get(self.bound, "")

    def busy_hold(self) -> bool:
        """Kernels fill nearly all of the compute holds."""
        return self.kernel_share >= BUSY_HOLD * self.compute_share

    def why(self) -> str:
        """What an operator can do about it, in words (the dashboard, summary and status say the same)."""
        cores = "" if self.cores_busy is None else f"host cores {self.cores_busy:.0%} busy"
        if self.bound == "gpu" and self.busy_hold():
            return "the GPU computes nearly all the time: more workers, host threads or another discipline will not help"
        if self.bound == "gpu":
            return (f"kernels fill {self.kernel_share / max(self.compute_share, 1e-9):.0%} of the hold: more workers "
                    "will not help; a discipline that keeps more out of the compute lock can")
        if self.bound == "host" and self.what == "prep_msm" and self.compute_share >= GPU_BOUND_SHARE:
            return "the GPU waits for prep_msm under its lock: a faster prep_msm (host_threads) or narrow (it before the lock) can help"
        if self.bound == "host" and self.what == "host_ram":
            return "workers wait for host RAM: a larger host_ram_budget or fewer bytes a worker help"
        if self.bound == "host" and self.modelled_host:
            return "the profile's modelled host times set the pace: more workers may help; another discipline will not"
        if self.bound == "host":
            if self.cores_busy is not None and self.cores_busy >= CORES_SATURATED:
                return f"{cores}: more workers or another discipline will not help"
            head = f"{cores}: " if cores else ""
            return head + "more workers or host_threads may help; another discipline will not"
        if self.bound == "lock":
            return "workers wait for a lock while the GPU idles: another discipline or mem_sync can help"
        if self.bound == "upload":
            return "uploads keep the GPU idle: pinned uploads or pre-staging help"
        if self.bound == "feed":
            return "workers idle: nothing queued for them"
        return ""




@dataclass
class Work:
    """Where a GPU's time and its workers' time went over a span (the pace's inputs)."""

    span: float
    held: float  # compute held
    busy: dict[str, float]  # activity -> worker seconds
    worker_s: float  # workers present x seconds
    means: dict[str, float]  # activity -> mean seconds a span
    gpu_section_s: float | None  # mean compute hold


def classify(gpu: int, w: Work, workers: float, cores_busy: float | None, cores: int | None, settled: bool,
             modelled_host: bool = False) -> Pace:
    """The bound from the compute share and where the workers' time went (module docstring)."""
    share = w.held / w.span if w.span > 0 else 0.0
    kernels = sum(w.busy.get(k, 0.0) for k in KERNELS)
    prep_wait = w.busy.get(PREP_WAIT, 0.0)
    shares = {k: v / w.worker_s for k, v in sorted(w.busy.items(), key=lambda kv: -kv[1]) if w.worker_s > 0 and v > 0}
    bound, what = "settling", ""
    if settled and share >= GPU_BOUND_SHARE:
        # held, but the holder mostly waits under the lock (for prep_msm, single's barrier): that sets the pace
        bound, what = ("host", "prep_msm") if prep_wait >= PREP_WAIT_OF_HOLD * w.held else ("gpu", "")
    elif settled:
        bound, what = _where(shares, w)
    # built without validation: every field is made here, at every view (10 Hz x GPUs)
    return Pace.model_construct(gpu=gpu, span_s=w.span, bound=bound, what=what, compute_share=share,
                                kernel_share=kernels / w.span if w.span > 0 else 0.0, shares=shares,
                                per_partition_s=w.means, gpu_section_s=w.gpu_section_s, workers=workers,
                                cores_busy=cores_busy, cores=cores, modelled_host=modelled_host)


def _where(shares: dict[str, float], w: Work) -> tuple[str, str]:
    """With the GPU idle and nobody waiting for it: the largest of the workers' other activities."""
    accounted = sum(v for k, v in w.busy.items() if k not in BESIDE)
    idle = max(0.0, 1.0 - accounted / w.worker_s) if w.worker_s > 0 else 0.0
    candidates = [(shares.get(p, 0.0) + (shares.get(PREP_WAIT, 0.0) if p == "prep_msm" else 0.0), "host", p)
                  for p in HOST_PHASES]
    candidates += [(shares.get(HOST_RAM_WAIT, 0.0), "host", "host_ram"), (shares.get(UPLOAD, 0.0), "upload", ""),
                   (idle, "feed", "")]
    waits = {k: v for k, v in shares.items()
             if k.startswith("wait:") and k not in (f"wait:{COMPUTE}", HOST_RAM_WAIT, PREP_WAIT)}
    if waits:
        lock = max(waits, key=lambda k: waits[k])
        candidates.append((sum(waits.values()), "lock", lock.removeprefix("wait:")))
    _, bound, what = max(candidates, key=lambda c: c[0])
    return bound, what
