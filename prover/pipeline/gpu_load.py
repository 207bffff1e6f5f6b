"""The GPU phase functions for a cuda run: prover.kernels' CUDA phases when they import
(impl "cuda"), each guarded so a failing GPU call falls back to the CPU reference for that
call, with a note (the first few). Without the kernels, the CPU reference runs under the GPU
section (impl "cpu-reference")."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from prover import events as ev
from prover.device.base import Stopped

Fn = Callable[..., Any]
_NOTED_FAILURES = 3


@dataclass
class GpuFns:
    ntt_h: Fn
    msm_g1: Fn
    b_g2_msm: Fn | None  # None: b_g2 on the GPU runs the CPU reference's b_g2_msm
    impl: str


def _on_host(x: Any) -> Any:
    """A device array (CuPy) as numpy, for the CPU reference after a GPU failure; else x."""
    return x.get() if type(x).__module__.startswith("cupy") else x


def load_gpu_fns(phases: Any, emit: Callable[..., Any]) -> GpuFns:
    cpu = {"ntt_h": phases.ntt_h, "msm_g1": phases.msm_g1, "b_g2_msm": phases.b_g2_msm}
    out = GpuFns(ntt_h=phases.ntt_h, msm_g1=phases.msm_g1, b_g2_msm=None, impl="cpu-reference")
    try:
        gp = importlib.import_module("prover.kernels.gpu_phases")
        from prover.kernels.gpu_adapter import make_gpu_phases

        fns = make_gpu_phases(gp)
    except Exception as exc:
        emit(ev.Note, level="info", text=f"CUDA kernels not available ({exc}); GPU phases run the CPU "
             "reference under the GPU section (impl cpu-reference)")
        return out
    failures = [0]

    def guarded(name: str, gpu_fn: Fn) -> Fn:
        def call(*args: Any) -> Any:
            try:
                return gpu_fn(*args)
            except Stopped:
                raise
            except Exception as exc:
                failures[0] += 1
                if failures[0] <= _NOTED_FAILURES:
                    emit(ev.Note, level="warn", text=f"{name} on the GPU failed, CPU reference used: {exc}")
                return cpu[name](*(_on_host(a) for a in args))
        return call

    if "ntt_h" in fns:
        out.ntt_h = guarded("ntt_h", fns["ntt_h"])
    if "msm_g1" in fns:
        out.msm_g1 = guarded("msm_g1", fns["msm_g1"])
    if "b_g2_msm" in fns:
        out.b_g2_msm = guarded("b_g2_msm", fns["b_g2_msm"])
    if fns:
        out.impl = "cuda"
        emit(ev.Note, level="info", text=f"CUDA kernels in use for {', '.join(sorted(fns))}")
    return out
