"""The GPU phase functions of a cuda run: the Groth16 composition (prover/groth16/compose.py)
over the backend prover.backend.select chose, whose failed primitives fall back to the CPU
reference with a note (prover.backend.Fallback). Without usable kernels the CPU reference
runs under the GPU section (impl "cpu-reference")."""
from __future__ import annotations

from typing import Any, Callable

from prover import events as ev
from prover.backend import Fallback
from prover.groth16.compose import GpuPhases, gpu_phases

GpuFns = GpuPhases  # what PartitionFlow calls: ntt_h, msm_g1, b_g2_msm, ntt_h_staged, pin_prep, impl


def reference_fns(phases: Any, impl: str) -> GpuFns:
    """The Phases' own ntt_h / msm_g1 under the GPU section (sim runs, no kernels)."""
    return GpuFns(ntt_h=phases.ntt_h, msm_g1=phases.msm_g1, b_g2_msm=None, impl=impl)


def load_gpu_fns(compute: Any, why: str, phases: Any, emit: Callable[..., Any]) -> GpuFns:
    if not isinstance(compute, Fallback):
        emit(ev.Note, level="info", text=f"CUDA kernels not available ({why}); GPU phases run the CPU "
             "reference under the GPU section (impl cpu-reference)")
        return reference_fns(phases, "cpu-reference")
    fns = gpu_phases(compute)
    emit(ev.Note, level="info", text=f"CUDA kernels in use for {', '.join(fns.in_use())}")
    return fns
