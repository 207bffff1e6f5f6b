"""Host wrappers of the NTT kernels (cuda/ntt.cu): the NTT-H of the GPU section, the NTTs of the
key set-up, and the element-wise Fr / Fp products the field tests drive. The MSMs are msm.py's,
the fixed-base multiplications fixed_base.py's.

Formats (project-wide): FrArray = uint64 (n, 4) canonical LE; G1 xy = uint8 (n, 96);
G2 xy = uint8 (n, 192) (x.c0, x.c1, y.c0, y.c1). Results are bit-identical to prover.field /
py_arkworks on the same inputs.

Every launch goes to the caller's stream (``stream=None`` -> CuPy's current stream); nothing
here synchronises the device. Functions returning host data synchronise only that stream
(the download). CuPy is imported lazily, so this module imports without it.
"""
from __future__ import annotations

import threading

import numpy as np

from prover.kernels import loader
from prover.kernels.cupy_util import _TPB, _as_u32_rows, _cp, _grid, _stream_ctx
from prover.field.params import FR_MONT_R as FR_R
from prover.field.params import GENERATOR as FR_GENERATOR
from prover.field.params import R_MOD, root_of_unity

from prover.settings import KernelSettings


def _nk(fn: str, ks: KernelSettings | None = None):
    """An NTT kernel of the build `ks` names: ntt_variant "c" (the settings' field_mul product) or
    "ptx" (the PTX rows, -DFIELD_PTX); ntt_radix 4 adds -DNTT_R4 (two stages a round in registers)."""
    ks = ks or loader.DEFAULTS
    defines = ("FIELD_PTX",) if ks.ntt_variant == "ptx" else ()
    return loader.get_kernel("ntt.cu", fn, defines + (("NTT_R4",) if ks.ntt_radix == 4 else ()), ks)


def _fr_mont_array(vals) -> np.ndarray:
    """Python ints -> (k, 8) uint32 Montgomery rows."""
    out = np.empty((len(vals), 4), dtype=np.uint64)
    m = (1 << 64) - 1
    for i, v in enumerate(vals):
        v = v * FR_R % R_MOD
        out[i] = (v & m, (v >> 64) & m, (v >> 128) & m, (v >> 192) & m)
    return out.view(np.uint32).reshape(-1, 8)


def _two_level(base: int, scale: int, count_log2: int) -> tuple[np.ndarray, np.ndarray, int]:
    """A[k] = base^k * scale, B[k] = base^(k << lo): base^i * scale = A[i & mask] * B[i >> lo]."""
    lo = max(1, (count_log2 + 1) // 2)
    hi = max(0, count_log2 - lo)
    A, x = [], scale % R_MOD
    for _ in range(1 << lo):
        A.append(x)
        x = x * base % R_MOD
    step = pow(base, 1 << lo, R_MOD)
    B, y = [], 1
    for _ in range(1 << hi):
        B.append(y)
        y = y * step % R_MOD
    return _fr_mont_array(A), _fr_mont_array(B), lo


# ------------------------------------------------------------------------------- NTT ----
class NttPlan:
    """Device tables for one domain size 2^L on one device: per-stage twiddles of w and w^-1
    (n entries each, Montgomery form; 2 * 32n bytes), and small two-level tables for the coset/1/n scalings."""

    def __init__(self, L: int, stream=None, ks: KernelSettings | None = None):
        cp = _cp()
        self.ks = ks
        if not 1 <= L <= 28:
            raise ValueError("NTT size 2^L needs 1 <= L <= 28")
        self.L, self.n = L, 1 << L
        n = self.n
        w = root_of_unity(L)
        winv = pow(w, R_MOD - 2, R_MOD)
        ninv = pow(n, R_MOD - 2, R_MOD)
        g, ginv = FR_GENERATOR, pow(FR_GENERATOR, R_MOD - 2, R_MOD)
        k_pow = _nk("powers_table", ks)
        with _stream_ctx(stream):
            self.tw = []
            half_log = max(L - 1, 0)
            for base in (w, winv):
                A, B, lo = _two_level(base, 1, half_log)
                dA, dB = cp.asarray(A), cp.asarray(B)
                t = cp.empty((max(n // 2, 1), 8), dtype=cp.uint32)
                k_pow(_grid(t.shape[0]), (_TPB,), (t, dA, dB, np.int32(lo), np.uint32(t.shape[0])))
                tws = cp.empty((n, 8), dtype=cp.uint32)
                _nk("twiddle_stages", ks)(_grid(n), (_TPB,), (t, tws, np.int32(L)))
                del t
                self.tw.append(tws)
            self.tw_fwd, self.tw_inv = self.tw

            def tables(base, scale):
                A, B, lo = _two_level(base, scale, L)
                return cp.asarray(A), cp.asarray(B), lo

            self.scale_coset_fwd = tables(g, ninv)      # after iNTT(DIF): g^i / n
            self.scale_coset_inv = tables(ginv, ninv)   # coset iNTT: g^-i / n
            self.scale_plain_inv = tables(1, ninv)      # plain iNTT: 1 / n
            self.scale_coset_only = tables(g, 1)        # coset NTT of coefficients: g^i
            zinv = pow((pow(g, n, R_MOD) - 1) % R_MOD, R_MOD - 2, R_MOD)
            self.k_h = cp.asarray(_fr_mont_array([zinv * FR_R % R_MOD]))  # zinv * R^2 in Mont = zinv*R*R
        self.passes = self._plan(L)

    @staticmethod
    def _plan(L: int) -> list[tuple[int, int]]:
        if L <= 10:
            return [(0, L)]
        out, lo = [(0, 10)], 10
        rest = L - 10
        k = -(-rest // 8)
        for i in range(k):
            s = rest // k + (1 if i < rest % k else 0)
            out.append((lo, s))
            lo += s
        return out

    # building blocks -------------------------------------------------------------------
    @staticmethod
    def _geometry(lo: int, S: int, radix: int = 2) -> tuple[int, int, int]:
        """(lc, E, threads) of a pass: C = 2^lc groups a block (4 once the stride allows); a thread
        a butterfly (radix 2) or a radix-4 unit (two stages of 4 elements) of a round."""
        lc = min(2, lo)
        E = 1 << (S + lc)
        per = 4 if radix == 4 and S >= 2 else 2
        return lc, E, min(256, max(E // per, 1))

    def _pass(self, fn: str, lo: int, S: int, args: tuple) -> None:
        """Launch the pass kernel `fn` over the blocks of pass (lo, S); args follow its signature."""
        lc, E, threads = self._geometry(lo, S, (self.ks or loader.DEFAULTS).ntt_radix)
        _nk(fn, self.ks)((self.n // E,), (threads,), args, shared_mem=E * 32)

    def _run_passes(self, x, tw, dif: bool, passes=None):
        passes = self.passes if passes is None else passes
        for lo, S in (list(reversed(passes)) if dif else passes):
            lc = self._geometry(lo, S)[0]
            self._pass("ntt_pass", lo, S, (x, tw, np.int32(self.L), np.int32(lo), np.int32(S), np.int32(lc),
                                           np.int32(1 if dif else 0)))

    def _scale_bitrev(self, x, tables):
        A, B, lo = tables
        k = _nk("scale_bitrev", self.ks)
        k(_grid(self.n), (_TPB,), (x, A, B, np.int32(lo), np.int32(self.L)))

    def _bitrev(self, x, out):
        k = _nk("bitrev_permute", self.ks)
        k(_grid(self.n), (_TPB,), (x, out, np.int32(self.L)))

    # natural-order transforms (x (n, 8) u32; `tmp` is scratch of the same shape); they return
    # the array that holds the result: x unfused, tmp fused (no copy back)
    def ntt(self, x, tmp, coset: bool = False, fused: bool = False):
        """coefficients -> evaluations over H (or g*H)."""
        if fused:  # bit reversal and coset scaling folded into the first pass's loads
            (lo0, S0), rest = self.passes[0], self.passes[1:]
            A, B, lo = self.scale_coset_only
            self._pass("ntt_pass_first_gather", lo0, S0, (x, tmp, self.tw_fwd, A, B, np.int32(lo), np.int32(self.L),
                                                          np.int32(S0), np.int32(1 if coset else 0)))
            self._run_passes(tmp, self.tw_fwd, dif=False, passes=rest)
            return tmp
        self._bitrev(x, tmp)
        if coset:
            self._scale_bitrev(tmp, self.scale_coset_only)
        self._run_passes(tmp, self.tw_fwd, dif=False)
        x[...] = tmp
        return x

    def intt(self, x, tmp, coset: bool = False, fused: bool = False):
        """evaluations over H (or g*H) -> coefficients."""
        tables = self.scale_coset_inv if coset else self.scale_plain_inv
        if fused:  # the 1/n (and g^-i) scaling and the bit reversal folded into the last pass's stores
            self._run_passes(x, self.tw_inv, dif=True, passes=self.passes[1:])
            self._last_scatter(x, tmp, tables)
            return tmp
        self._run_passes(x, self.tw_inv, dif=True)
        self._scale_bitrev(x, tables)
        self._bitrev(x, tmp)
        x[...] = tmp
        return x

    def _last_scatter(self, x, out, tables) -> None:
        A, B, lo = tables
        S0 = self.passes[0][1]
        self._pass("ntt_pass_last_scatter", 0, S0, (x, out, self.tw_inv, A, B, np.int32(lo), np.int32(self.L), np.int32(S0)))

    def ntt_h(self, a, b, c, fused: bool = False):
        """The NTT-H phase in place on device arrays (n, 8) u32: six transforms, h left as its
        evaluations on the coset g*H in natural order (the H query is in coset-Lagrange form:
        prover/field/ntt.py ntt_h). Returns the buffer holding h (a's); b and c are clobbered."""
        if fused:
            return self._ntt_h_fused(a, b, c)
        for x in (a, b, c):
            self._run_passes(x, self.tw_inv, dif=True)          # evaluations -> bitrev coeffs * n
            self._scale_bitrev(x, self.scale_coset_fwd)         # * g^i / n
            self._run_passes(x, self.tw_fwd, dif=False)         # -> natural evaluations on g*H
        k = _nk("pointwise_h", self.ks)
        k(_grid(self.n), (_TPB,), (a, b, c, self.k_h, np.uint32(self.n)))
        return a

    def _ntt_h_fused(self, a, b, c):
        """NTT-H's six transforms in 5 + 5 + 5 passes at 2^24 and the quotient: the change of
        domain's middle (DIF stages, g^i/n, DIT stages) is one pass (ntt_pass_mid); no final
        coset iNTT (h stays on the coset, for the coset-Lagrange H query)."""
        (lo0, S0), rest = self.passes[0], self.passes[1:]
        A, B, lo = self.scale_coset_fwd
        for x in (a, b, c):
            self._run_passes(x, self.tw_inv, dif=True, passes=rest)
            self._pass("ntt_pass_mid", lo0, S0, (x, self.tw_inv, self.tw_fwd, A, B, np.int32(lo), np.int32(self.L),
                                                  np.int32(S0)))
            self._run_passes(x, self.tw_fwd, dif=False, passes=rest)
        _nk("pointwise_h", self.ks)(_grid(self.n), (_TPB,), (a, b, c, self.k_h, np.uint32(self.n)))
        return a


_plans: dict[tuple, NttPlan] = {}
_plans_lock = threading.Lock()


def ntt_plan(L: int, stream=None, ks: KernelSettings | None = None) -> NttPlan:
    cp = _cp()
    ks = ks or loader.DEFAULTS
    key = (cp.cuda.Device().id, L, ks.ntt_variant, ks.field_mul, ks.ntt_radix, ks.nvrtc_arch, ks.nvrtc_opts)
    with _plans_lock:
        plan = _plans.get(key)
        if plan is None:
            plan = _plans[key] = NttPlan(L, stream, ks)
    return plan


def _log2_exact(n: int) -> int:
    L = n.bit_length() - 1
    if n <= 1 or (1 << L) != n:
        raise ValueError(f"size must be a power of two >= 2, got {n}")
    return L



def ntt_h_device(d_a, d_b, d_c, stream=None, ks: KernelSettings | None = None):
    """NTT-H in place on device FrArrays (cupy uint64 (n, 4) or uint32 (n, 8)); returns the
    device array holding h (aliases d_a). Launches only, no synchronisation."""
    cp = _cp()
    a, b, c = (x.view(cp.uint32).reshape(-1, 8) for x in (d_a, d_b, d_c))
    plan = ntt_plan(_log2_exact(a.shape[0]), stream, ks)
    with _stream_ctx(stream):
        h = plan.ntt_h(a, b, c, fused=(ks or loader.DEFAULTS).ntt_fused)
    return h.view(cp.uint64).reshape(-1, 4)


def ntt_h_gpu(a, b, c, stream=None, out_device: bool = False, ks: KernelSettings | None = None):
    """h = (coset_NTT(iNTT a) * coset_NTT(iNTT b) - coset_NTT(iNTT c)) / (g^n - 1): h's evaluations
    on the coset g*H, natural order (six transforms; prover.field.ntt.ntt_h).

    a, b, c: FrArray (numpy or cupy). Returns numpy for numpy inputs (synchronising the
    stream for the download), else (or with out_device=True) a new cupy array. Inputs are not
    modified."""
    cp = _cp()
    with _stream_ctx(stream):
        da, db, dc = (_as_u32_rows(x, 8, stream, copy=True) for x in (a, b, c))
        h = ntt_h_device(da, db, dc, stream, ks)
        if out_device or isinstance(a, cp.ndarray):
            return h
        return cp.asnumpy(h, stream=stream)


def ntt_gpu(x, inverse: bool = False, coset: bool = False, stream=None, ks: KernelSettings | None = None):
    """Natural-order (coset) NTT / iNTT of one FrArray, same conventions as prover.field.ntt."""
    cp = _cp()
    with _stream_ctx(stream):
        d = _as_u32_rows(x, 8, stream, copy=True)
        plan = ntt_plan(_log2_exact(d.shape[0]), stream, ks)
        tmp = cp.empty_like(d)
        out = (plan.intt if inverse else plan.ntt)(d, tmp, coset=coset, fused=(ks or loader.DEFAULTS).ntt_fused)
        if isinstance(x, cp.ndarray):
            return out.view(cp.uint64).reshape(-1, 4)
        return cp.asnumpy(out.view(cp.uint64).reshape(-1, 4), stream=stream)


def fr_elementwise_gpu(a, b, op: str, stream=None, ks: KernelSettings | None = None):
    """Test helper: element-wise Fr op ('mul','add','sub','sqr','inv') on canonical FrArrays."""
    return _elementwise("fr_elementwise", 8, a, b, op, stream, ks)


def fp_elementwise_gpu(a, b, op: str, stream=None, ks: KernelSettings | None = None):
    """Test helper: element-wise Fp op on (n, 6) uint64 canonical LE arrays."""
    return _elementwise("fp_elementwise", 12, a, b, op, stream, ks)


def _elementwise(fn, words, a, b, op, stream, ks=None):
    cp = _cp()
    code = {"mul": 0, "add": 1, "sub": 2, "sqr": 3, "inv": 4}[op]
    with _stream_ctx(stream):
        da, db = _as_u32_rows(a, words, stream, False), _as_u32_rows(b, words, stream, False)
        out = cp.empty_like(da)
        n = da.shape[0]
        _nk(fn, ks)(_grid(n), (_TPB,), (da, db, out, np.uint32(n), np.int32(code)))
        return cp.asnumpy(out.view(cp.uint64).reshape(n, words // 2), stream=stream)
