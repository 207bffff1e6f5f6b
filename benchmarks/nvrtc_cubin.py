"""A cubin (SASS) from NVRTC, for benchmarks/sass_counts.py --compiler nvrtc.

Why not CuPy's disk cache (what sass_counts read before, and what failed on the H200 on
2026-12-03 with "no cubin in CuPy's cache"): CuPy 14 makes its cache backend
(`cupy.cuda.compiler._kernel_cache_backend = _DiskKernelCacheBackend()`) when
`cupy.cuda.compiler` is imported, and that object fixes the directory then. Setting
CUPY_CACHE_DIR after `import cupy` has no effect: the cubin went to ~/.cupy/kernel_cache and the
private directory stayed empty.

So the cubin is asked of NVRTC itself, in this order:
1. `cupy.cuda.compiler.compile_using_nvrtc` (CuPy's own NVRTC, the library the prover's
   RawModules use), with the options CuPy's RawModule adds (`-ftz=true`, its include
   directories, `--device-as-default-execution-space`) and `-arch=sm_<cc>`; CuPy then asks
   NVRTC for the cubin (nvrtcGetCUBIN), unless CUPY_COMPILE_WITH_PTX is set (PTX: refused here).
2. libnvrtc through ctypes (nvrtcCreateProgram, nvrtcCompileProgram with
   `--gpu-architecture=sm_<cc>`, nvrtcGetCUBIN): no CuPy and no GPU needed, so CI machines
   with the nvidia-cuda-nvrtc wheel can run it too.
Each result is checked to be an ELF image; what was used is returned beside it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
# CuPy's RawModule compiles with these on top of the caller's (cupy/_core/core.pyx, compiler.py)
CUPY_EXTRA = ("-ftz=true", "--device-as-default-execution-space")


class NoCubin(RuntimeError):
    """No path gave an ELF cubin; the message lists why each failed."""


def arch_digits(arch: str) -> str:
    """'sm_90' / 'compute_90' / '90' -> '90'."""
    d = arch.split("_")[-1]
    if not d[:2].isdigit():
        raise ValueError(f"not a GPU architecture: {arch!r} (want e.g. sm_90)")
    return d


def is_cubin(data: object) -> bool:
    return isinstance(data, (bytes, bytearray)) and bytes(data[:4]) == ELF_MAGIC


def via_cupy(source: str, options: tuple[str, ...], arch: str) -> tuple[bytes, dict]:
    import cupy  # noqa: F401  (the GPU machine)
    from cupy.cuda import compiler

    opts = tuple(options)
    try:  # the include directories and -std RawModule adds (private; best effort)
        from cupy._core import core
        opts = tuple(core.assemble_cupy_compiler_options(opts))
    except Exception:  # noqa: BLE001  (older/newer CuPy: the caller's options are enough for our sources)
        pass
    out = compiler.compile_using_nvrtc(source, opts + ("-ftz=true",), arch_digits(arch))
    obj = out[0] if isinstance(out, tuple) else out
    if not is_cubin(obj):
        raise NoCubin(f"CuPy's NVRTC gave {type(obj).__name__} starting {bytes(obj[:8]) if isinstance(obj, (bytes, bytearray)) else str(obj)[:20]!r}, "
                      "not a cubin (CUPY_COMPILE_WITH_PTX set, or NVRTC older than the arch?)")
    try:
        ver = ".".join(map(str, compiler._get_nvrtc_version()))
    except Exception:  # noqa: BLE001
        ver = "?"
    return bytes(obj), {"path": "cupy.compile_using_nvrtc", "nvrtc_version": ver, "options": list(opts) + ["-ftz=true"]}


def find_libnvrtc() -> str | None:
    """libnvrtc: C2TUI_LIBNVRTC, the nvidia-cuda-nvrtc wheel beside this Python, CUDA_HOME, the loader's path."""
    if os.environ.get("C2TUI_LIBNVRTC"):
        return os.environ["C2TUI_LIBNVRTC"]
    cands: list[Path] = []
    for site in map(Path, sys.path):
        nv = site / "nvidia"
        if nv.is_dir():
            cands += sorted(nv.glob("cu*/lib/libnvrtc.so*")) + sorted(nv.glob("cuda_nvrtc/lib/libnvrtc.so*"))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            cands += sorted((Path(os.environ[env]) / "lib64").glob("libnvrtc.so*"))
    cands += sorted(Path("/usr/local/cuda/lib64").glob("libnvrtc.so*"))
    for c in cands:
        if c.is_file() and "builtins" not in c.name:
            return str(c)
    return ctypes.util.find_library("nvrtc")


def via_ctypes(source: str, options: tuple[str, ...], arch: str, lib: str | None = None) -> tuple[bytes, dict]:
    path = lib or find_libnvrtc()
    if not path:
        raise NoCubin("no libnvrtc found (pip install nvidia-cuda-nvrtc, or C2TUI_LIBNVRTC=/path/libnvrtc.so)")
    nv = ctypes.CDLL(path)
    nv.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(rc: int, what: str, prog: ctypes.c_void_p | None = None) -> None:
        if rc == 0:
            return
        log = ""
        if prog is not None:
            n = ctypes.c_size_t()
            if nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n)) == 0 and n.value > 1:
                buf = ctypes.create_string_buffer(n.value)
                nv.nvrtcGetProgramLog(prog, buf)
                log = buf.value.decode(errors="replace")[-2000:]
        raise NoCubin(f"{what}: {nv.nvrtcGetErrorString(rc).decode()} {log}".strip())

    major, minor = ctypes.c_int(), ctypes.c_int()
    check(nv.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    opts = tuple(options) + CUPY_EXTRA + (f"--gpu-architecture=sm_{arch_digits(arch)}",)
    prog = ctypes.c_void_p()
    check(nv.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"probe.cu", 0, None, None), "nvrtcCreateProgram")
    try:
        argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        check(nv.nvrtcCompileProgram(prog, len(opts), argv), "nvrtcCompileProgram", prog)
        size = ctypes.c_size_t()
        check(nv.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize", prog)
        buf = ctypes.create_string_buffer(size.value)
        check(nv.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN", prog)
    finally:
        nv.nvrtcDestroyProgram(ctypes.byref(prog))
    data = buf.raw[: size.value]
    if not is_cubin(data):
        raise NoCubin(f"libnvrtc ({path}) gave {size.value} bytes that are not an ELF cubin")
    return data, {"path": "ctypes libnvrtc", "lib": path, "nvrtc_version": f"{major.value}.{minor.value}",
                  "options": list(opts)}


def nvrtc_cubin(source: str, options: tuple[str, ...], arch: str = "sm_90", use_cupy: bool = True) -> tuple[bytes, dict]:
    """(cubin bytes, {path, nvrtc_version, options}) from the first path that gives an ELF image."""
    errors = []
    paths = ((via_cupy,) if use_cupy else ()) + (via_ctypes,)
    for fn in paths:
        try:
            return fn(source, options, arch)
        except ImportError as e:
            errors.append(f"{fn.__name__}: no CuPy ({e})")
        except Exception as e:  # noqa: BLE001  (a compile error names itself in the message)
            errors.append(f"{fn.__name__}: {e.__class__.__name__}: {str(e)[-1500:]}")
    raise NoCubin("no cubin from NVRTC: " + " | ".join(errors))
