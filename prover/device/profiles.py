"""Device profiles: phase times and buffer sizes of one partition at a modelled size.

SimDevice (and CudaDevice's modelled busy kernels) take their timings from here. Times are
seconds for one partition at `modelled_log2`; a different modelled size scales them linearly
in the domain size (n log n effects ignored: this is a model, and it says so).

`rtx5070ti-16g` carries the facts in DESIGN.md (cuzk notes, RTX 5070 Ti 16 GB, 2^27):
  ntt_msm_h 690 ms  -> phase ntt_h
  batch_add 650 ms + tail MSM 83 ms + the other G1 MSMs (L, A, B_G1) ~377 ms -> phase msm
      (1.11 s, so that the GPU total is the measured ~1.8 s)
  prep_msm 1.9 s (CPU), b_g2_msm 0.48 s (CPU), pre-stage alloc+upload 18 ms.
Assumptions (not measured facts; named so they can be argued with):
  synthesis 1.0 s per partition (a sector's synthesis spread over many CPU workers);
  epilogue 50 ms (result read-back, per-GPU thread join, cleanup: after the kernels end,
      before the buffers are freed);
  fallback_upload 4.0 s: the non-prestaged path = synchronous allocation + pageable upload
      of a, b, c (12 GiB at ~3 GB/s) inside the compute section. The seed reports 102 s
      for a sector whose partitions fell back, i.e. several seconds per fallback partition.
  b_g2 on the GPU 60 ms; assemble 20 ms; verify 0 (real time only);
  r1cs 33 ms: A.z, B.z, C.z on the GPU (abc gpu), scaled from the kernel's measured 0.13 ms for
      2^20 rows on an H200 (RESULTS, issue 38: x 128 to 2^27 = 17 ms) and doubled for the 5070 Ti
      as the h200 profile halves the kernels; modelled, not measured on a 5070 Ti.
With abc gpu the pre-stage uploads z's upload form (prover/host/zpack.py: 12 B a 32 variables and
32 B a field value; the family's 0.95 variables and 0.035 field variables a row: ~1.5 B a row)
where it uploaded a, b, c (96 B a row): its time and the fallback's upload scale by those bytes
(`times(upload_share=...)`: ~0.015), and the r1cs time is spent inside it.
Add a profile by adding a `Profile(...)` to PROFILES (or `register_profile`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

GiB = 1024**3


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    card_name: str
    card_bytes: int
    modelled_log2: int = 27
    # seconds per partition at modelled_log2
    synthesis: float = 1.0
    prep_msm: float = 1.9
    prestage: float = 0.018
    ntt_h: float = 0.69
    msm: float = 1.11
    epilogue: float = 0.05
    fallback_upload: float = 4.0
    b_g2_msm_cpu: float = 0.48
    b_g2_msm_gpu: float = 0.06
    assemble: float = 0.02
    verify: float = 0.0
    device_sync_overhead: float = 0.001
    r1cs: float = 0.033
    # buffer bytes per domain element
    buffers: dict[str, int] = field(default_factory=lambda: {"d_a": 32, "d_bc": 64})

    def scale(self, log2: int) -> float:
        return 2.0 ** (log2 - self.modelled_log2)

    def times(self, log2: int | None = None, upload_share: float = 1.0) -> dict[str, float]:
        """Seconds per partition at `log2`; `upload_share`: the pre-stage's bytes against a, b, c's
        (abc gpu uploads z's upload form: ~0.015), which its upload times scale by."""
        f = self.scale(log2 if log2 is not None else self.modelled_log2)
        keys = ("synthesis", "prep_msm", "prestage", "ntt_h", "msm", "epilogue", "fallback_upload",
                "b_g2_msm_cpu", "b_g2_msm_gpu", "assemble", "verify", "device_sync_overhead", "r1cs")
        out = {k: getattr(self, k) * f for k in keys}
        out["prestage"] *= upload_share
        out["fallback_upload"] *= upload_share
        return out

    def buffer_bytes(self, log2: int | None = None) -> dict[str, int]:
        n = 1 << (log2 if log2 is not None else self.modelled_log2)
        return {name: per * n for name, per in self.buffers.items()}

    def partition_bytes(self, log2: int | None = None) -> int:
        return sum(self.buffer_bytes(log2).values())


PROFILES: dict[str, Profile] = {}


def register_profile(p: Profile) -> Profile:
    PROFILES[p.name] = p
    return p


register_profile(Profile(
    name="rtx5070ti-16g",
    description="RTX 5070 Ti 16 GB timings from the cuzk notes, 32 GiB PoRep partition (2^27)",
    card_name="NVIDIA GeForce RTX 5070 Ti",
    card_bytes=16 * GiB,
))
register_profile(replace(
    PROFILES["rtx5070ti-16g"],
    name="h200-141g",
    description="H200 141 GB (assumed ~2x faster kernels than the 5070 Ti; CPU phases unchanged)",
    card_name="NVIDIA H200",
    card_bytes=141 * GiB,
    ntt_h=0.35, msm=0.55, prestage=0.010, fallback_upload=2.0, b_g2_msm_gpu=0.03, r1cs=0.017,
))
register_profile(replace(
    PROFILES["rtx5070ti-16g"],
    name="tiny",
    description="a fast toy profile for demos and tests (2^20 modelled, ~10 ms phases)",
    card_name="Toy GPU",
    card_bytes=1 * GiB,
    modelled_log2=20,
    synthesis=0.010, prep_msm=0.019, prestage=0.001, ntt_h=0.007, msm=0.011, epilogue=0.001,
    fallback_upload=0.04, b_g2_msm_cpu=0.005, b_g2_msm_gpu=0.001, assemble=0.001, r1cs=0.0004,
))
# No model at all: every phase takes the time its real work takes (kernels at real speed on a
# CudaDevice, the CPU reference on a SimDevice) and buffers are sized for the proved circuit
# (pass --modelled-log2 equal to --constraints-log2). For measuring, not for emulating a card.
register_profile(replace(
    PROFILES["rtx5070ti-16g"],
    name="native",
    description="no modelled times: real work at real speed (use --modelled-log2 = --constraints-log2)",
    card_name="(this device)",
    card_bytes=0,
    synthesis=0.0, prep_msm=0.0, prestage=0.0, ntt_h=0.0, msm=0.0, epilogue=0.0,
    fallback_upload=0.0, b_g2_msm_cpu=0.0, b_g2_msm_gpu=0.0, assemble=0.0, verify=0.0,
    device_sync_overhead=0.0, r1cs=0.0,
))


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
