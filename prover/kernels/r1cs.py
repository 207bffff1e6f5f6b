"""The R1CS products A.z, B.z, C.z on the device (cuda/r1cs.cu), from the host kernel's recoding of
each matrix (prover/host/matvec.py's MatrixPlan, made once per circuit): the host's largest share
of a partition (three sparse products), moved to a kernel of ~0.1 ms per 2^20 rows, so that a
worker uploads z's compact form (prover/host/zpack.py: a table of its classes and ranks, its field
values packed) instead of a, b and c.

    arrays = device_arrays(circuit.a.host_plan)         # the host arrays of its device form, by name
    dm = DeviceMatrix(plan, {name: device array})       # over arrays already on the device (counted
                                                        # by the device's allocator: the GPU's room)
    matvec_gpu(dm, d_vals, d_tab, stream, out=d_a)      # (rows, 4) uint64 canonical, on the device

`device_matrix(plan)` uploads them itself (tests and benchmarks only: the engine allocates through
its device). Same bytes as ``prover.host.matvec.matvec`` (a sum mod r is unique). CuPy is imported
lazily.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from prover.field.params import FR_MONT_R, R_MOD
from prover.host.matvec import BIG, MatrixPlan
from prover.kernels import loader
from prover.kernels.cupy_util import _cp, _grid, _stream_ctx
from prover.settings import KernelSettings

NAMES = ("indptr", "cols", "codes", "small_plain", "small_mont", "big_plain", "big_mont", "big_pos")


def _fr_rows(vals: list[int]) -> np.ndarray:
    """Python ints (any sign) -> (k, 4) uint64 canonical rows (at least one row: a kernel argument)."""
    out = np.zeros((max(len(vals), 1), 4), dtype=np.uint64)
    m = (1 << 64) - 1
    for i, v in enumerate(vals):
        v %= R_MOD
        out[i] = (v & m, (v >> 64) & m, (v >> 128) & m, v >> 192)
    return out


def _ints(rows: np.ndarray) -> list[int]:
    return [int(r[0]) | int(r[1]) << 64 | int(r[2]) << 128 | int(r[3]) << 192 for r in rows]


def device_arrays(plan: MatrixPlan) -> dict[str, np.ndarray]:
    """A matrix's device form as host arrays, by name (NAMES): u32 row pointers, int32 columns,
    u8 codes, the small coefficients plain and in Montgomery form, the full-size ones likewise and
    their entry positions (u32, sorted): `plan.device_bytes()` in all. ValueError for a matrix of
    2^32 entries or more."""
    nnz = int(plan.indptr[-1])
    if nnz >= 1 << 32:
        raise ValueError(f"matrix of {nnz} entries: the device kernel takes < 2^32")
    small = [int(v) for v in plan.values]
    big = _ints(plan.big_plain)
    big_pos = np.flatnonzero(plan.codes == BIG).astype(np.uint32)
    return {"indptr": plan.indptr.astype(np.uint32), "cols": np.ascontiguousarray(plan.cols, dtype=np.int32),
            "codes": np.ascontiguousarray(plan.codes, dtype=np.uint8),
            "small_plain": _fr_rows(small), "small_mont": _fr_rows([v * FR_MONT_R for v in small]),
            "big_plain": _fr_rows(big), "big_mont": _fr_rows([v * FR_MONT_R for v in big]),
            "big_pos": big_pos if len(big_pos) else np.zeros(1, np.uint32)}


class DeviceMatrix:
    """One matrix's device form on one device, over device arrays by name (NAMES)."""

    def __init__(self, plan: MatrixPlan, arrays: dict[str, Any]) -> None:
        self.plan, self.rows = plan, len(plan.indptr) - 1
        self.arrays = arrays
        self.nbig = int(np.count_nonzero(plan.codes == BIG))

    @classmethod
    def upload(cls, plan: MatrixPlan, stream: Any = None) -> "DeviceMatrix":
        """Uploaded by CuPy's own allocator (tests and benchmarks; the engine counts its bytes)."""
        cp = _cp()
        with _stream_ctx(stream):
            return cls(plan, {k: cp.asarray(v) for k, v in device_arrays(plan).items()})

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays.values())


_cache: dict[tuple[int, int], DeviceMatrix] = {}
_lock = threading.Lock()


def device_matrix(plan: MatrixPlan, stream: Any = None) -> DeviceMatrix:
    """The plan's device copy on the current device, uploaded on first use (one a plan and device)."""
    key = (id(plan), _cp().cuda.Device().id)
    with _lock:
        dm = _cache.get(key)
        if dm is None or dm.plan is not plan:
            dm = _cache[key] = DeviceMatrix.upload(plan, stream)
    return dm


def matvec_gpu(dm: DeviceMatrix | MatrixPlan, vals: Any, tab: Any, stream: Any = None, out: Any = None,
               ks: KernelSettings | None = None) -> Any:
    """M . z on the device, z in its upload form (prover/host/zpack.py; numpy or cupy arrays): `vals`
    its field values packed ((k, 4) uint64, canonical), `tab` its (words, 3) uint32 table of ones,
    others and ranks. Returns a cupy (rows, 4) uint64 array (`out` when given); launches only."""
    cp = _cp()
    if isinstance(dm, MatrixPlan):
        dm = device_matrix(dm, stream)
    with _stream_ctx(stream):
        d_vals = cp.asarray(vals).view(cp.uint64).reshape(-1, 4)
        d_tab = cp.asarray(tab).view(cp.uint32).reshape(-1)
        if out is None:
            out = cp.empty((dm.rows, 4), dtype=cp.uint64)
        elif out.shape != (dm.rows, 4) or out.dtype != cp.uint64:
            raise ValueError(f"matvec_gpu out: need a uint64 ({dm.rows}, 4) array, got {out.dtype} {out.shape}")
        a = dm.arrays
        k = loader.get_kernel("r1cs.cu", "r1cs_matvec", (), ks)
        k(_grid(dm.rows, 128), (128,), (a["indptr"], a["cols"], a["codes"], a["small_plain"], a["small_mont"],
                                        a["big_plain"], a["big_mont"], a["big_pos"], np.uint32(dm.nbig), d_vals, d_tab,
                                        out, np.uint32(dm.rows)))
    return out
