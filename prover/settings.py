"""Kernel and setup tunables, one typed object (`KernelSettings`) that RunConfig carries as
`kernels`. Each field has an environment override `C2TUI_<FIELD>` (C2TUI_CACHE for cache_dir),
read when settings are made (`KernelSettings.from_env()`), never at import; docs/settings.md
lists them.

Settings are passed in, never read from a global: the engine builds its compute backend
with the run's (prover/backend.py select -> kernels/cuda_backend.py, which hands them to every
kernel call), gives setup its kernels=, the CudaDevice its pinned_host, and sizes fr's block
pool (prover/field/blocks.py configure). Code run outside an engine (benchmarks, c2tui prove)
makes them from the environment (`KernelSettings.from_env()`) or passes nothing (defaults).
"""
from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_ENV_NAMES = {"cache_dir": "C2TUI_CACHE"}
RESIDENT_AUTO_LOG2 = 26  # key_resident=auto keeps keys from this size on the device (docs/scale.md)


class KernelSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    nvrtc_arch: str | None = Field(None, description="NVRTC --gpu-architecture, e.g. sm_90 (default: CuPy's, the device's)")
    nvrtc_opts: str = Field("", description="extra NVRTC options, space separated (e.g. -DFIELD_MUL=<variant>)")
    field_mul: Literal["eo_sq", "eo_k", "eo_k2", "eo_sq2", "eo_c", "eo", "cios"] = Field(
        "eo_sq", description="the Montgomery product every module is built with (-DFIELD_MUL, field.cuh): eo_sq "
        "(even/odd chains + dedicated squaring), eo_k (+ Karatsuba products, Fr reduction rows on the ALU), eo_k2 "
        "(eo_k + one reduction for the XYZZ formulas' sums of two products), eo_sq2 (eo_sq + that); a FIELD_MUL in "
        "nvrtc_opts wins, and the ptx builds (ntt_variant=ptx, *_variant=ptx*) keep their PTX rows; eo_sq "
        "measured fastest on the H200 (2026-12-03: the others slower or within 0.3%)")
    ntt_variant: Literal["c", "ptx"] = Field("c", description="NTT build: c (field.cuh's product) or ptx (-DFIELD_PTX)")
    ntt_radix: int = Field(2, ge=2, le=4, multiple_of=2, description="NTT pass stages: 2 (a stage a round through shared memory) or "
                                     "4 (two stages a round in registers: half the shared-memory traffic and barriers; "
                                     "same bytes; measured 4-5% slower than 2 on the H200, 2026-12-03)")
    ntt_fused: bool = Field(True, description="NTT-H and natural-order NTTs with fused passes (the scalings, the "
                            "quotient and the bit reversal folded into the transforms' passes); false: a kernel a step")
    g1_variant: Literal["call", "ptx_call", "inline", "ptx"] = Field("call", description="G1 MSM build")
    g2_variant: Literal["call", "ptx_call", "inline", "ptx"] = Field("call", description="G2 MSM build")
    msm_max_c: int = Field(16, ge=6, le=22, description="widest MSM window (bits) the cost model may pick")
    msm_precompute: Literal["auto", "h", "none"] = Field(
        "auto", description="precomputed window shifts of the H query: auto (if <= 1/4 of free memory), h (always), none")
    msm_piece: int = Field(32, ge=4, le=1024, description="bucket entries one thread sums in an MSM's first "
                           "accumulation level (mixed additions); the piece sums are then added in levels of 16")
    msm_acc: Literal["xyzz", "affine"] = Field(
        "xyzz", description="an MSM's first accumulation level: xyzz (mixed XYZZ additions, ~10 products each) or "
        "affine (msm_affine_rounds rounds that halve each bucket's list by affine pair additions with one shared "
        "inversion a thread, ~6 products each, then the XYZZ pieces; scratch: about 0.75x the entries as affine points)")
    msm_affine_rounds: int = Field(2, ge=1, le=8, description="msm_acc=affine: batch-affine halving rounds before "
                                   "the XYZZ pieces")
    msm_affine_batch: int = Field(0, ge=0, le=4096, description="msm_acc=affine: pair additions a thread shares one "
                                  "inversion over; 0: auto (about 2^17 threads a round, 128..512 pairs each)")
    msm_lanes: int = Field(4, ge=1, le=8, description="streams a partition's G1 MSMs spread over: H on the worker's, "
                           "L, A and B_G1 each on a lane of their own, so independent MSMs fill each other's idle "
                           "SMs; 1: all on one stream")
    setup_gpu: bool = Field(True, description="set up large keys on the GPU when one is visible")
    key_resident: Literal["auto", "host", "device"] = Field(
        "auto", description="where a key set up on the GPU is kept: host (downloaded; the MSMs upload it again), "
        "device (resident where the MSMs read it, no host copy: its host RAM is its presence bits; docs/scale.md), "
        "auto (device from 2^26 constraints, where a host copy would crowd the workers out)")
    key_cache_write: bool = Field(True, description="write a freshly set-up key to the key cache (a 2^27 key is "
                                  "~70 GiB: off where the disk or the time is short)")
    fr_threads: int = Field(0, ge=0, le=1024, description="threads for large Fr operations; 0: min(32, cores); 1: off")
    cache_dir: str | None = Field(None, description="proving-key cache (default ~/.cache/c2tui/keys)")
    pinned_host: bool = Field(True, description="synthesis writes a, b, c into page-locked host buffers (one set a "
                              "worker, reused) so the pre-stage upload is a DMA, not a staged pageable copy (cuda)")

    @classmethod
    def env_name(cls, field: str) -> str:
        return _ENV_NAMES.get(field, "C2TUI_" + field.upper())

    @classmethod
    def from_env(cls, **given: Any) -> "KernelSettings":
        """The given values, with any C2TUI_* variable set in the environment overriding them."""
        data = dict(given)
        for name in cls.model_fields:
            v = os.environ.get(cls.env_name(name))
            if v is not None and v != "":
                data[name] = v
        return cls.model_validate(data)

    def key_on_device(self, log2: int) -> bool:
        """Whether a key of 2^log2 constraints set up on the GPU stays there (key_resident)."""
        return self.key_resident == "device" or (self.key_resident == "auto" and log2 >= RESIDENT_AUTO_LOG2)

    def fr_thread_count(self) -> int:
        return self.fr_threads or min(32, os.cpu_count() or 1)
