"""The R1CS products A.z, B.z, C.z on the device (cuda/r1cs.cu), from the host kernel's recoding of
each matrix (prover/host/matvec.py's MatrixPlan, made once per circuit): the host's largest share
of a partition at 2^22 (three sparse products over ~20M entries), moved to a kernel of ~1 ms, so
that a worker uploads z and its density classes instead of a, b and c.

    dm = device_matrix(circuit.a.host_plan, stream)    # uploaded once per matrix and device
    d_a = matvec_gpu(dm, d_z, d_cls, stream)            # (rows, 4) uint64 canonical, on the device

Same bytes as ``prover.host.matvec.matvec`` (a sum mod r is unique). CuPy is imported lazily.
"""
from __future__ import annotations

import threading

import numpy as np

from prover.field.params import FR_MONT_R, R_MOD
from prover.host.matvec import BIG, MatrixPlan
from prover.kernels import loader
from prover.kernels.cupy_util import _cp, _grid, _stream_ctx
from prover.settings import KernelSettings


def _fr_rows(vals) -> np.ndarray:
    """Python ints (any sign) -> (k, 4) uint64 canonical rows (at least one row: a kernel argument)."""
    out = np.zeros((max(len(vals), 1), 4), dtype=np.uint64)
    m = (1 << 64) - 1
    for i, v in enumerate(vals):
        v %= R_MOD
        out[i] = (v & m, (v >> 64) & m, (v >> 128) & m, v >> 192)
    return out


def _ints(rows: np.ndarray) -> list[int]:
    return [int(r[0]) | int(r[1]) << 64 | int(r[2]) << 128 | int(r[3]) << 192 for r in rows]


class DeviceMatrix:
    """One matrix's plan on one device: indptr, columns, codes, the coefficient tables (plain and
    Montgomery) and, per row, how many full-size coefficients precede it."""

    def __init__(self, plan: MatrixPlan, stream=None):
        cp = _cp()
        self.plan, self.rows = plan, len(plan.indptr) - 1
        small = [int(v) for v in plan.values]
        big = _ints(plan.big_plain)
        big_before = np.concatenate(([0], np.cumsum(plan.codes == BIG, dtype=np.int64)))[plan.indptr[:-1]]
        with _stream_ctx(stream):
            self.indptr = cp.asarray(plan.indptr.astype(np.uint64))
            self.cols = cp.asarray(plan.cols.astype(np.int32))
            self.codes = cp.asarray(plan.codes)
            self.small_plain = cp.asarray(_fr_rows(small))
            self.small_mont = cp.asarray(_fr_rows([v * FR_MONT_R for v in small]))
            self.big_plain = cp.asarray(_fr_rows(big))
            self.big_mont = cp.asarray(_fr_rows([v * FR_MONT_R for v in big]))
            self.big_before = cp.asarray(big_before.astype(np.uint32))

    @property
    def nbytes(self) -> int:
        return sum(int(getattr(self, k).nbytes) for k in ("indptr", "cols", "codes", "big_plain", "big_mont", "big_before"))


_cache: dict[tuple[int, int], DeviceMatrix] = {}
_lock = threading.Lock()


def device_matrix(plan: MatrixPlan, stream=None) -> DeviceMatrix:
    """The plan's device copy on the current device, uploaded on first use (one a plan and device)."""
    key = (id(plan), _cp().cuda.Device().id)
    with _lock:
        dm = _cache.get(key)
        if dm is None or dm.plan is not plan:
            dm = _cache[key] = DeviceMatrix(plan, stream)
    return dm


def matvec_gpu(dm: DeviceMatrix | MatrixPlan, z, cls, stream=None, out=None, ks: KernelSettings | None = None):
    """M . z on the device: z a canonical FrArray ((n, 4) uint64, numpy or cupy), cls its density
    classes (uint8). Returns a cupy (rows, 4) uint64 array (`out` when given); launches only."""
    cp = _cp()
    if isinstance(dm, MatrixPlan):
        dm = device_matrix(dm, stream)
    with _stream_ctx(stream):
        d_z = cp.asarray(z).view(cp.uint64).reshape(-1, 4)
        d_cls = cp.asarray(cls).view(cp.uint8).reshape(-1)
        if out is None:
            out = cp.empty((dm.rows, 4), dtype=cp.uint64)
        elif out.shape != (dm.rows, 4) or out.dtype != cp.uint64:
            raise ValueError(f"matvec_gpu out: need a uint64 ({dm.rows}, 4) array, got {out.dtype} {out.shape}")
        k = loader.get_kernel("r1cs.cu", "r1cs_matvec", (), ks)
        k(_grid(dm.rows, 128), (128,), (dm.indptr, dm.cols, dm.codes, dm.small_plain, dm.small_mont, dm.big_plain,
                                        dm.big_mont, dm.big_before, d_z, d_cls, out, np.uint32(dm.rows)))
    return out
