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
    # NTT-H over device views of the pre-staged buffers, consumed in place:
    # ntt_h_staged((d_a, d_b, d_c), (a, b, c) on the host for the CPU fallback) -> h
    ntt_h_staged: Fn | None = None
    # prep_msm's output made ready for the GPU MSMs' uploads (page-locked), on the prep thread
    pin_prep: Fn | None = None


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
        def call(*args: Any, fallback_args: tuple[Any, ...] | None = None) -> Any:
            try:
                return gpu_fn(*args)
            except Stopped:
                raise
            except Exception as exc:
                failures[0] += 1
                if failures[0] <= _NOTED_FAILURES:
                    emit(ev.Note, level="warn", text=f"{name} on the GPU failed, CPU reference used: {exc}")
                return cpu[name](*(_on_host(a) for a in (args if fallback_args is None else fallback_args)))
        return call

    if "ntt_h" in fns:
        out.ntt_h = guarded("ntt_h", fns["ntt_h"])
    if "ntt_h_staged" in fns:
        staged = guarded("ntt_h", fns["ntt_h_staged"])

        def ntt_h_staged(views: tuple[Any, ...], host: tuple[Any, ...]) -> Any:
            # the views may be half-transformed when the GPU call fails: the CPU reference
            # then reads the host arrays, never the views
            return staged(*views, fallback_args=host)
        out.ntt_h_staged = ntt_h_staged
    if "msm_g1" in fns:
        out.msm_g1 = guarded("msm_g1", fns["msm_g1"])
    if "b_g2_msm" in fns:
        out.b_g2_msm = guarded("b_g2_msm", fns["b_g2_msm"])
    if "pin_prep" in fns:
        pin = fns["pin_prep"]

        def pin_prep(prep: Any) -> Any:
            try:
                return pin(prep)
            except Exception as exc:  # e.g. no lockable memory left: pageable uploads still work
                emit(ev.Note, level="warn", text=f"prep_msm output not page-locked ({exc}); pageable uploads")
                return prep
        out.pin_prep = pin_prep
    if fns:
        out.impl = "cuda"
        emit(ev.Note, level="info", text=f"CUDA kernels in use for {', '.join(sorted(fns))}")
    return out
