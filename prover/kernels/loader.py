"""Compile the CUDA sources (kernels/cuda/) with NVRTC (cupy.RawModule), once per process and device.

CuPy is imported lazily: ``import prover.kernels`` works on machines without it.
"""
from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from prover.settings import KernelSettings

DEFAULTS = KernelSettings()  # what a caller that passes no settings gets (never the environment)

CUDA_DIR = Path(__file__).resolve().parent / "cuda"  # the .cu/.cuh sources (package data)

_lock = threading.Lock()
_cache: dict[tuple, object] = {}



def compile_options(arch: str | None = None, defines: tuple[str, ...] = (),
                    ks: KernelSettings | None = None) -> tuple[str, ...]:
    """NVRTC options. CuPy itself adds the current device's -arch, so none is given here unless
    asked for (arch=... or the settings' nvrtc_arch, e.g. sm_90)."""
    ks = ks or DEFAULTS
    opts = ["-I" + str(CUDA_DIR), "-std=c++17"] + ["-D" + d for d in defines]
    # the product variant (field.cuh's default is eo_sq); FIELD_PTX builds and an explicit
    # FIELD_MUL in nvrtc_opts keep theirs (field.cuh lets FIELD_MUL win over FIELD_PTX)
    if ks.field_mul != "eo_sq" and "FIELD_PTX" not in defines and "FIELD_MUL" not in ks.nvrtc_opts:
        opts.append("-DFIELD_MUL=" + ks.field_mul)
    arch = arch or ks.nvrtc_arch
    if arch:
        opts.append("--gpu-architecture=" + arch)
    opts.extend(ks.nvrtc_opts.split())
    return tuple(opts)


def headers_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(CUDA_DIR.glob("*.cuh")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def get_module(name: str, defines: tuple[str, ...] = (), ks: KernelSettings | None = None):
    """The cupy.RawModule for kernels/<name> (with -D defines) on the current device, compiled
    on first use."""
    import cupy

    dev = cupy.cuda.Device().id
    options = compile_options(defines=tuple(defines), ks=ks)
    key = (name, dev, options)
    mod = _cache.get(key)
    if mod is not None:
        return mod
    with _lock:
        mod = _cache.get(key)
        if mod is None:
            code = (CUDA_DIR / name).read_text()
            # CuPy's on-disk kernel cache keys on the source text only: stamp the headers' hash
            # into it so that an edited header recompiles.
            code = f"// headers {headers_digest()}\n" + code
            mod = cupy.RawModule(code=code, options=options, backend="nvrtc")
            mod.compile()
            _cache[key] = mod
    return mod


def get_kernel(module: str, fn: str, defines: tuple[str, ...] = (), ks: KernelSettings | None = None):
    return get_module(module, defines, ks).get_function(fn)
