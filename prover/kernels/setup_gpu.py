"""The key set-up's device steps (kernels: cuda/setup.cu), so that a 2^27 key is set up where its
MSMs will read it: powers and Lagrange bases at tau, the QAP's transposed sparse products, the
per-variable scalars, and fixed-base multiplications whose output stays on the device as the
Montgomery points the MSMs read (`ResidentPoints`: no host copy, no re-upload).

Formats as in ntt.py: FrArray = (n, 4) uint64 canonical (cupy here); every function
launches on CuPy's current stream (or `stream`) and returns device arrays, except `nonzero_host`
and `ResidentPoints.to_host`, which download. A matrix is anything with the compact CSR
fields of prover/groth16/r1cs.SparseMatrix (indptr, indices, codes, values, big, n_cols): kernels/
never imports groth16/ (structural typing).
"""
from __future__ import annotations

import numpy as np

from prover.field import fr
from prover.field.params import FR_MONT_R, R_MOD
from prover.kernels import loader
from prover.kernels.cupy_util import _TPB, _cp, _grid, _stream_ctx
from prover.kernels.msm import _GROUPS, DevicePoints, _gk
from prover.settings import KernelSettings

BIG = 255  # the compact matrices' code of a full-size coefficient (prover/host/matvec.py)
HEAVY = 4096  # a column with more entries is summed by a block of its own (qap_heavy)
HEAVY_TPB = 256
TO_HOST_ROWS = 1 << 22  # rows a download converts at once (G2: 768 MiB of scratch)
_MAX_GRID = 1 << 20  # grid-stride kernels: at most this many blocks


def _sk(fn: str, ks: KernelSettings | None = None):
    return loader.get_kernel("setup.cu", fn, (), ks)


def _g(n: int) -> tuple[int]:
    return (min(_grid(n)[0], _MAX_GRID),)


def _u32(x):
    """A cupy FrArray (n, 4) uint64 as the kernels' (n, 8) uint32 rows (a view)."""
    return x.view(_cp().uint32).reshape(-1, 8)


def _mont_rows(values: list[int]) -> np.ndarray:
    """Python ints -> (k, 8) uint32 Montgomery rows (x * R mod r)."""
    return fr.from_ints([v * FR_MONT_R % R_MOD for v in values]).view(np.uint32).reshape(-1, 8)


def _plain_rows(values: list[int]) -> np.ndarray:
    return fr.from_ints(values).view(np.uint32).reshape(-1, 8)


def powers(base: int, n: int, scale: int = 1, ks: KernelSettings | None = None, stream=None):
    """[base^i * scale for i < n] on the device (canonical), from two small host tables."""
    cp = _cp()
    L = max(1, (n - 1).bit_length())
    lo = max(1, (L + 1) // 2)
    A, x = [], 1
    for _ in range(1 << lo):
        A.append(x)
        x = x * base % R_MOD
    step, B, y = pow(base, 1 << lo, R_MOD), [], scale % R_MOD
    for _ in range(-(-n // (1 << lo))):
        B.append(y)
        y = y * step % R_MOD
    with _stream_ctx(stream):
        out = cp.empty((n, 4), dtype=cp.uint64)
        if n:
            _sk("setup_powers", ks)(_g(n), (_TPB,), (_u32(out), cp.asarray(_mont_rows(A)), cp.asarray(_plain_rows(B)),
                                                     np.int32(lo), np.uint32(n)))
    return out


def lagrange(tau: int, n: int, ks: KernelSettings | None = None, stream=None):
    """[L_j(tau) for j < n] over the size-n domain: the inverse NTT of the powers of tau (tau off
    the domain), on the device."""
    from prover.kernels.ntt import ntt_gpu

    p = powers(tau, n, 1, ks, stream)
    out = ntt_gpu(p, inverse=True, stream=stream, ks=ks)
    del p
    return out


def _coef_table(m) -> np.ndarray:
    """(255 + big, 8) uint32 Montgomery coefficients: rows < 255 the small values by code, then
    the full-size ones in entry order."""
    small = [int(v) % R_MOD for v in m.values] + [0] * (BIG - len(m.values))
    table = _mont_rows(small)
    if len(m.big):
        big = fr.to_mont(np.ascontiguousarray(m.big, dtype=np.uint64)).T.astype(np.uint32)  # (nb, 8) limbs
        table = np.concatenate([table, big])
    return np.ascontiguousarray(table)


def qap(m, lag, ks: KernelSettings | None = None, stream=None):
    """m^T . lag on the device: out[i] = sum_j m[j, i] * lag[j] for every column i (canonical).
    The entries are sorted by column on the device (argsort), each column summed by a thread,
    or by a block when it holds more than HEAVY entries. Exact field sums: any order, the same
    bytes as the host kernel."""
    cp = _cp()
    u32 = cp.uint32
    n_cols, n_rows, nnz = int(m.n_cols), len(m.indptr) - 1, len(m.indices)
    if nnz >= 1 << 32:
        raise ValueError(f"{nnz} entries: over the u32 indices of the QAP kernels")
    with _stream_ctx(stream):
        out = cp.zeros((n_cols, 4), dtype=cp.uint64)
        if nnz == 0:
            return out
        rows = cp.empty(nnz, dtype=u32)
        _sk("csr_row_ids", ks)(_g(n_rows), (_TPB,), (cp.asarray(np.ascontiguousarray(m.indptr, np.int64)),
                                                      np.uint32(n_rows), rows))
        codes = cp.asarray(np.ascontiguousarray(m.codes, np.uint8))
        isbig = (codes == BIG).astype(u32)
        ci = codes.astype(u32) + isbig * (cp.cumsum(isbig, dtype=u32) - isbig)  # BIG + its rank among the big
        del codes, isbig
        cols = cp.asarray(np.ascontiguousarray(m.indices)).astype(u32, copy=False)
        order = cols.argsort()
        rows, ci, cols = rows[order], ci[order], cols[order]
        del order
        colptr = cp.empty(n_cols + 1, dtype=u32)
        _sk("csr_colptr", ks)(_g(nnz + 1), (_TPB,), (cols, np.uint32(nnz), np.uint32(n_cols), colptr))
        del cols
        coef = cp.asarray(_coef_table(m))
        lag32 = _u32(cp.ascontiguousarray(lag))
        _sk("qap_columns", ks)(_g(n_cols), (_TPB,), (colptr, rows, ci, coef, lag32, np.uint32(n_cols),
                                                      np.uint32(HEAVY), _u32(out)))
        heavy = cp.nonzero((colptr[1:] - colptr[:-1]) > HEAVY)[0].astype(u32)
        if int(heavy.shape[0]):
            _sk("qap_heavy", ks)((int(heavy.shape[0]),), (HEAVY_TPB,), (colptr, rows, ci, coef, lag32, heavy, _u32(out)),
                                 shared_mem=HEAVY_TPB * 32)
    return out


def combo(u, v, w, alpha: int, beta: int, gamma: int, delta: int, ni: int, ks: KernelSettings | None = None,
          stream=None):
    """(beta*u + alpha*v + w) / gamma for the first ni rows, / delta for the rest (device)."""
    cp = _cp()
    n = int(u.shape[0])
    k = cp.asarray(_mont_rows([beta, alpha, pow(gamma, -1, R_MOD), pow(delta, -1, R_MOD)]))
    with _stream_ctx(stream):
        out = cp.empty((n, 4), dtype=cp.uint64)
        _sk("setup_combo", ks)(_g(n), (_TPB,), (_u32(u), _u32(v), _u32(w), k, np.uint32(ni), np.uint32(n), _u32(out)))
    return out


def scale(x, k: int, ks: KernelSettings | None = None, stream=None, in_place: bool = False):
    """[x_i * k] on the device (in x itself with in_place)."""
    cp = _cp()
    n = int(x.shape[0])
    with _stream_ctx(stream):
        out = x if in_place else cp.empty((n, 4), dtype=cp.uint64)
        _sk("fr_scale", ks)(_g(n), (_TPB,), (_u32(x), cp.asarray(_mont_rows([k])), np.uint32(n), _u32(out)))
    return out


def nonzero_host(x, ks: KernelSettings | None = None, stream=None) -> np.ndarray:
    """(n,) bool on the host: which rows of a device FrArray are not zero."""
    cp = _cp()
    n = int(x.shape[0])
    with _stream_ctx(stream):
        out = cp.empty(n, dtype=cp.uint8)
        _sk("fr_nonzero", ks)(_g(n), (_TPB,), (_u32(x), np.uint32(n), out))
        return cp.asnumpy(out, stream=stream).astype(bool)


class ResidentPoints(DevicePoints):
    """A proving key's query kept on the device as the MSMs read it (Montgomery affine), with no
    host copy: set up there (fixed_base_points) and adopted in place. len() and shape are the
    host array's; to_host() makes the canonical xy bytes (the key cache, the CPU reference's
    fallback); the key's host RAM is then its presence bits, not tens of GiB."""

    device_id: int

    @classmethod
    def adopt(cls, group: str, xy, ks: KernelSettings | None = None, stream=None) -> "ResidentPoints":
        """Take a device (n, 96|192) uint8 canonical xy array as it is (no copy) and convert it
        to Montgomery form in place: the array becomes the points."""
        cp = _cp()
        aw, nbytes = _GROUPS[group][1], _GROUPS[group][3]
        self = cls.__new__(cls)
        self.group, self.ks, self.pre = group, ks or loader.DEFAULTS, None
        with _stream_ctx(stream):
            d = xy.reshape(-1, nbytes)
            self.d = d.view(cp.uint32).reshape(-1, aw)
            self.n = int(self.d.shape[0])
            if self.n:
                _gk(group, f"{group}_points_to_mont", ks=self.ks)(_grid(self.n), (_TPB,), (self.d, np.uint32(self.n)))
        self.device_id = int(cp.cuda.Device().id)
        return self

    def __len__(self) -> int:
        return self.n

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, _GROUPS[self.group][3])

    def to_host(self, stream=None) -> np.ndarray:
        """The canonical xy bytes (n, 96|192) on the host, converted and downloaded in pieces."""
        cp = _cp()
        aw, nbytes = _GROUPS[self.group][1], _GROUPS[self.group][3]
        out = np.empty((self.n, nbytes), dtype=np.uint8)
        with cp.cuda.Device(self.device_id), _stream_ctx(stream):
            for lo in range(0, self.n, TO_HOST_ROWS):
                hi = min(self.n, lo + TO_HOST_ROWS)
                tmp = cp.empty((hi - lo, aw), dtype=cp.uint32)
                _sk(f"{self.group}_points_from_mont", self.ks)(_g(hi - lo), (_TPB,), (self.d[lo:hi], tmp,
                                                                                      np.uint32(hi - lo)))
                out[lo:hi] = cp.asnumpy(tmp, stream=stream).view(np.uint8).reshape(hi - lo, nbytes)
                del tmp
        return out

    def on_current_device(self) -> DevicePoints:
        """These points where the caller's device is: themselves, or a device-to-device copy."""
        cp = _cp()
        if int(cp.cuda.Device().id) == self.device_id:
            return self
        other = DevicePoints.__new__(DevicePoints)
        other.group, other.ks, other.pre, other.n = self.group, self.ks, None, self.n
        other.d = cp.array(self.d, copy=True)
        return other


def fixed_base_points(group: str, base_xy, scalars, ks: KernelSettings | None = None, stream=None) -> ResidentPoints:
    """[s_i * B] for device scalars, kept on the device as the MSMs' points (ResidentPoints)."""
    from prover.kernels.fixed_base import fixed_base_gpu

    xy = fixed_base_gpu(group, base_xy, scalars, stream, out_device=True, ks=ks)
    return ResidentPoints.adopt(group, xy, ks, stream)
