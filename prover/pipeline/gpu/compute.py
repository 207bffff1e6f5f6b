"""The GPU section's compute of a run (prover.groth16.compose.GpuCompute): on a cuda run the
composition over the backend prover.backend.select chose (its failed primitives fall back to
the CPU reference with a note, prover.backend.Fallback); without usable kernels, and on sim
runs, the phases' own functions run under the GPU section (impl "cpu-reference" / "sim")."""
from __future__ import annotations

from typing import Any, Callable

from prover import events as ev
from prover.backend import REFERENCE
from prover.groth16.compose import GpuCompute


def host_compute(phases: Any, impl: str) -> GpuCompute:
    """The phases' own NTT-H and MSMs under the GPU section (sim runs, no kernels)."""
    return GpuCompute.on_host(phases, impl)


def load_gpu_compute(backend: Any, why: str, phases: Any, emit: Callable[..., Any]) -> GpuCompute:
    """A cuda run's compute: over its device backend, or (none: select gave the reference,
    and said why) the CPU reference under the GPU section, said in a note either way."""
    if backend is REFERENCE:
        emit(ev.Note, level="info", text=f"CUDA kernels not available ({why}); GPU phases run the CPU "
             "reference under the GPU section (impl cpu-reference)")
        return host_compute(phases, "cpu-reference")
    gpu = GpuCompute.over(backend, phases)
    emit(ev.Note, level="info", text=f"CUDA kernels in use for {', '.join(gpu.in_use())}")
    return gpu
