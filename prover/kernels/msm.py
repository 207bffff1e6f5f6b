"""Host wrappers of the MSM kernels (msm_g1.cu, msm_g2.cu): points on the device, Pippenger
MSMs (plain and over precomputed window shifts), batch additions, launched now and read later.
Formats as in ntt.py; CuPy is imported lazily."""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from prover.kernels import loader, msm_affine
from prover.kernels.cupy_util import _TPB, _as_u32_rows, _cp, _grid, _stream_ctx
from prover.field.curve_int import finish_windows
from prover.field.params import R_MOD
from prover.settings import KernelSettings


# ------------------------------------------------------------------------------- MSM ----
_GROUPS = {
    # name: (module, affine u32 words, xyzz u32 words, xy bytes)
    "g1": ("msm_g1.cu", 24, 48, 96),
    "g2": ("msm_g2.cu", 48, 96, 192),
}
# MSM builds (settings' g1_variant / g2_variant): "call" (Fp products are calls to field.cuh's
# default product; fast to compile, the fastest), "ptx_call" (calls, the PTX rows), "inline" /
# "ptx" (products inlined: slower on the H200 and 30-100 s to compile)
MSM_VARIANTS = {"call": ("FP_MUL_CALL=1",), "ptx_call": ("FP_MUL_CALL=1", "FIELD_PTX"), "inline": (),
                "ptx": ("FIELD_PTX",)}


def _defines(group: str, variant: str | None = None, ks: KernelSettings | None = None) -> tuple[str, ...]:
    ks = ks or loader.DEFAULTS
    return MSM_VARIANTS[variant or (ks.g1_variant if group == "g1" else ks.g2_variant)]


def _gk(group: str, fn: str, variant: str | None = None, ks: KernelSettings | None = None):
    return loader.get_kernel(_GROUPS[group][0], fn, _defines(group, variant, ks), ks)


class DevicePoints:
    """Affine points uploaded once (Montgomery form on the device), reusable across
    partitions and MSMs of one proving key; `ks` names the kernels' build and MSM limits."""

    def __init__(self, group: str, xy, stream=None, ks: KernelSettings | None = None):
        cp = _cp()
        self.group, self.ks = group, ks or loader.DEFAULTS
        mod, aw, _, nbytes = _GROUPS[group]
        with _stream_ctx(stream):
            if isinstance(xy, cp.ndarray):
                d = cp.ascontiguousarray(xy).copy()
            else:
                d = cp.asarray(np.ascontiguousarray(xy, dtype=np.uint8).reshape(-1, nbytes))
            self.d = d.view(cp.uint32).reshape(-1, aw)
            self.n = self.d.shape[0]
            _gk(group, f"{group}_points_to_mont", ks=self.ks)(_grid(self.n), (_TPB,), (self.d, np.uint32(self.n)))
        self.pre: tuple[int, int] | None = None  # (c, W) once precompute() has run

    def precompute(self, c: int | None = None, stream=None) -> "DevicePoints":
        """Points with their window shifts 2^(c*w) * P_i (w < W) stored after them, so that MSMs
        over them use one set of buckets for all windows (wider windows, no per-window
        reduction). Costs W times the memory and one pass of doublings/inversions, once per key."""
        cp = _cp()
        c = c or msm_window_bits_precomputed(self.n)
        W = _num_windows(c)
        out = DevicePoints.__new__(DevicePoints)
        out.group, out.n, out.pre, out.ks = self.group, self.n, (c, W), self.ks
        with _stream_ctx(stream):
            out.d = cp.empty((W * self.n, self.d.shape[1]), dtype=cp.uint32)
            _gk(self.group, f"{self.group}_msm_precompute", ks=self.ks)(_grid(self.n, 128), (128,), (
                self.d, np.uint32(self.n), np.int32(c), np.int32(W), out.d))
        return out

    @property
    def nbytes(self) -> int:
        return int(self.d.nbytes)

    def take(self, idx, stream=None) -> "DevicePoints":
        """The points at `idx`, gathered on the device (no upload, no second Montgomery pass):
        the tail MSM of a query uses a subset of the key's points."""
        cp = _cp()
        sub = DevicePoints.__new__(DevicePoints)
        sub.group, sub.pre, sub.ks = self.group, None, self.ks  # rows < n of a precomputed array are the points
        with _stream_ctx(stream):
            d_idx = idx if isinstance(idx, cp.ndarray) else cp.asarray(np.asarray(idx, dtype=np.int64))
            sub.d = self.d[d_idx]
        sub.n = int(sub.d.shape[0])
        return sub


class ProvingKeyOnDevice:
    """Device copies of a proving key's queries, uploaded once and shared by partitions:
    ``pk_dev = ProvingKeyOnDevice(h=..., l=..., a=..., b_g1=..., b_g2=...)``; each argument
    is an xy array (G1 (n, 96), b_g2 (n, 192)). Absent queries are skipped."""

    def __init__(self, stream=None, precompute: str | None = None, ks: KernelSettings | None = None, **queries):
        ks = ks or loader.DEFAULTS
        self.points: dict[str, DevicePoints] = {}
        for name, xy in queries.items():
            if xy is None:
                continue
            group = "g2" if np.asarray(xy).shape[-1] == 192 or name.endswith("g2") else "g1"
            self.points[name] = DevicePoints(group, xy, stream, ks)
        # The H query is the one MSM with full random scalars (the others are mostly 0/1 and go
        # to batch addition): give it precomputed window shifts where the memory allows.
        mode = precompute or ks.msm_precompute
        if "h" in self.points and mode in ("auto", "h"):
            self.points["h"] = _try_precompute(self.points["h"], mode == "auto", stream)

    def __getitem__(self, name: str) -> DevicePoints:
        return self.points[name]

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.points.values())


MSM_MAX_C_PRE = 22  # precomputed windows: 2^21 shared buckets at most


def msm_window_bits_precomputed(n: int) -> int:
    """Window width for precomputed points: W(c) * n mixed adds + ~3 * 2^(c-1) reduce adds, once."""
    return min(range(6, MSM_MAX_C_PRE + 1), key=lambda c: _num_windows(c) * n + 3 * (1 << (c - 1)))


def _try_precompute(points: DevicePoints, auto: bool, stream) -> DevicePoints:
    cp = _cp()
    c = msm_window_bits_precomputed(points.n)
    need = _num_windows(c) * points.nbytes
    if auto and need > cp.cuda.runtime.memGetInfo()[0] // 4:
        return points
    try:
        return points.precompute(c, stream)
    except cp.cuda.memory.OutOfMemoryError:
        warnings.warn(f"no device memory for the precomputed H query ({need >> 20} MiB); using plain MSMs",
                      RuntimeWarning, stacklevel=2)
        return points


def msm_window_bits(n: int, max_c: int | None = None) -> int:
    """Window width c from a cost model: W(c) * (n mixed adds + ~3 * 2^(c-1) bucket-reduce adds)."""
    best, best_cost = 8, None
    for c in range(6, (max_c or loader.DEFAULTS.msm_max_c) + 1):
        W = _num_windows(c)
        cost = W * (n + 3 * (1 << (c - 1)))
        if best_cost is None or cost < best_cost:
            best, best_cost = c, cost
    return best


def _num_windows(c: int) -> int:
    W = -(-256 // c)
    # signed digits: the top window's value plus carry must stay <= 2^(c-1)
    while ((R_MOD - 1) >> (c * (W - 1))) + 1 > (1 << (c - 1)):
        W += 1
    return W


LC0 = KernelSettings.model_fields["msm_piece"].default  # entries a thread sums in the first level
LCN = 16   # partial sums per thread in later levels


def _msm_device(points: DevicePoints, scalars, stream=None, c: int | None = None, variant: str | None = None,
                marks: list | None = None, device_final: bool = True):
    """Launch the Pippenger MSM; returns a device (1, aw) u32 array (canonical affine), or with
    device_final=False the (W, xyzz) window sums and c for finish_windows on the host.
    marks: a list to append (stage, cupy Event) to (benchmark breakdowns)."""
    cp = _cp()
    group = points.group
    mod, aw, xw, _ = _GROUPS[group]
    k = lambda name: _gk(group, f"{group}_{name}", variant, points.ks)  # noqa: E731
    kk = lambda name: _gk(group, name, variant, points.ks)  # noqa: E731

    def mark(stage):
        if marks is not None:
            ev = cp.cuda.Event()
            ev.record(stream)
            marks.append((stage, ev))

    with _stream_ctx(stream):
        mark("start")
        s = _as_u32_rows(scalars, 8, stream, copy=False)
        n = s.shape[0]
        if n > points.n:
            raise ValueError(f"{n} scalars for {points.n} points")
        if n == 0:
            z = cp.zeros((1, aw if device_final else xw), dtype=cp.uint32)
            return z if device_final else (z, 1)
        if points.pre is not None:  # one shared set of buckets; window w reads rows w*points.n + i
            c, W = points.pre
            B = 1 << (c - 1)
            nb, bstride, pstride, WB = B, 0, points.n, 1
        else:
            c = c or msm_window_bits(n, points.ks.msm_max_c)
            W = _num_windows(c)
            B = 1 << (c - 1)
            nb, bstride, pstride, WB = W * B, B, 0, W
        u32 = cp.uint32
        digits = cp.empty(W * n, dtype=cp.int32)
        counts = cp.zeros(nb, dtype=u32)
        kk("msm_digits")(_grid(n), (_TPB,), (s, np.uint32(n), np.int32(c), np.int32(W), np.uint32(bstride), digits, counts))
        incl = cp.cumsum(counts, dtype=u32)
        cursor = incl - counts
        entries = cp.empty(max(W * n, 1), dtype=u32)
        kk("msm_scatter")(_grid(W * n), (_TPB,), (digits, np.uint32(n), np.int32(c), np.int32(W), np.uint32(bstride),
                                                  np.uint32(pstride), cursor, entries))
        del digits, cursor
        mark("sort")
        lc0 = points.ks.msm_piece
        part, pc, pincl, bound_pieces = _acc0(k, kk, points, entries, counts, incl, nb, W * n, aw, xw, mark)
        del entries
        mark("acc0")
        bound = -(-(n * (W if bstride == 0 else 1)) // lc0)  # most pieces one bucket can have
        while bound > 1:
            pc2 = cp.empty(nb, dtype=u32)
            kk("msm_pieces")(_grid(nb), (_TPB,), (pc, pc2, np.uint32(nb), np.uint32(LCN)))
            pincl2 = cp.cumsum(pc2, dtype=u32)
            bound_pieces = -(-bound_pieces // LCN) + nb
            part2 = cp.empty((bound_pieces, xw), dtype=u32)
            k("msm_accn")(_grid(bound_pieces, 128), (128,), (part, pc, pincl, pc2, pincl2, np.uint32(nb), np.uint32(LCN), part2))
            part, pc, pincl = part2, pc2, pincl2
            bound = -(-bound // LCN)
        buckets = cp.empty((nb, xw), dtype=u32)
        k("msm_bucket_final")(_grid(nb, 128), (128,), (part, pc, pincl, np.uint32(nb), buckets))
        del part
        mark("accn")
        win = _reduce_windows(k, buckets, B, WB, xw)
        mark("window_reduce")
        if not device_final:
            return win, c
        out = cp.empty((1, aw), dtype=u32)
        k("msm_final")((1,), (1,), (win, np.int32(WB), np.int32(c), out))
        mark("final")
        return out


def _acc0(k, kk, points: DevicePoints, entries, counts, incl, nb: int, m: int, aw: int, xw: int,
          mark: Callable[[str], None]):
    """The first accumulation level: pieces of <= msm_piece entries a bucket, each summed by one
    thread with mixed XYZZ additions (longer pieces: fewer piece sums for the later levels' full
    additions, fewer threads); with msm_acc = "affine", over the lists that batch-affine rounds
    (msm_affine.py) made from the entries. Returns (piece sums, pieces a bucket, their inclusive
    prefix, a bound on the pieces); mark: the stage marks' recorder."""
    cp = _cp()
    u32 = cp.uint32
    ks = points.ks
    lc0 = ks.msm_piece
    if ks.msm_acc == "affine":
        lst, counts, incl = msm_affine.pair_rounds(k, kk, entries, points.d, counts, incl, nb, m, aw,
                                                   ks.msm_affine_rounds, ks.msm_affine_batch)
        mark("affine_rounds")
    pc = cp.empty(nb, dtype=u32)
    kk("msm_pieces")(_grid(nb), (_TPB,), (counts, pc, np.uint32(nb), np.uint32(lc0)))
    pincl = cp.cumsum(pc, dtype=u32)
    bound_pieces = -(-m // lc0) + nb  # the rounds' lists are no longer than the entries
    part = cp.empty((bound_pieces, xw), dtype=u32)
    args = (counts, incl, pc, pincl, np.uint32(nb), np.uint32(lc0), part)
    if ks.msm_acc == "affine":
        k("msm_acc0_list")(_grid(bound_pieces, 128), (128,), (lst,) + args)
    else:
        k("msm_acc0")(_grid(bound_pieces, 128), (128,), (entries, points.d) + args)
    return part, pc, pincl, bound_pieces


def _reduce_windows(k, buckets, B: int, WB: int, xw: int):
    """Window reduction: SB blocks x G threads of segments per window, then a tree (WB bucket
    sets: one per window, or a single shared one for precomputed points) -> (WB, xyzz) sums."""
    cp = _cp()
    u32 = cp.uint32
    G = min(128, B)
    SB = max(1, min(B // G // 4, max(32, 256 // WB)))  # reduce_xyzz runs SB threads: G2 needs <= 256
    scratch = cp.empty((WB * SB * G, xw), dtype=u32)
    wpart = cp.empty((WB * SB, xw), dtype=u32)
    k("msm_window_reduce")((WB * SB,), (G,), (buckets, np.uint32(B), np.uint32(SB), scratch, wpart))
    win = cp.empty((WB, xw), dtype=u32)
    G2 = 1
    while G2 < SB:
        G2 *= 2
    k("reduce_xyzz")((WB,), (G2,), (wpart, np.uint32(WB * SB), np.uint32(SB), scratch, win))
    return win


def _to_bytes(dev_u32, stream) -> bytes:
    cp = _cp()
    return cp.asnumpy(dev_u32, stream=stream).tobytes()


def _points(group: str | None, points, stream, ks: KernelSettings | None = None) -> DevicePoints:
    """points as DevicePoints of `group` (uploading an xy array; group None: a DevicePoints'
    own group, G1 for an array)."""
    if isinstance(points, DevicePoints):
        if group is not None and points.group != group:
            raise ValueError(f"{points.group} points given to a {group} MSM")
        return points
    return DevicePoints(group or "g1", points, stream, ks)


class Pending:
    """A launched MSM or batch addition: result() downloads its few bytes (synchronising the
    stream) and finishes on the host. Launching several before the first result() keeps the
    GPU busy while the host waits or finishes earlier ones."""

    def __init__(self, dev, finish, stream):
        # the stream it was launched on (the current one when none was named): a download on
        # whatever stream is current at fetch() could overtake the kernels
        self._dev, self._finish = dev, finish
        self._stream = stream if stream is not None else _cp().cuda.get_current_stream()

    def result(self) -> bytes:
        return self.fetch()()

    def fetch(self) -> "Callable[[], bytes]":
        """Download now (synchronising the stream); the host step runs when the returned
        function is called, which may be later and on another thread."""
        host = _cp().asnumpy(self._dev, stream=self._stream)
        finish = self._finish
        return lambda: finish(host)


def msm_launch(points, scalars, stream=None, c: int | None = None, variant: str | None = None,
               group: str | None = None, ks: KernelSettings | None = None) -> Pending:
    """Launch sum_i scalars[i] * points[i] (xy array or DevicePoints); see Pending."""
    pts = _points(group, points, stream, ks)
    win, c = _msm_device(pts, scalars, stream, c, variant, device_final=False)
    return Pending(win, lambda w: finish_windows(w, c, pts.group), stream)


def batch_add_launch(points, idx, stream=None, group: str | None = None, ks: KernelSettings | None = None) -> Pending:
    """Launch sum of points[idx]; see Pending."""
    pts = _points(group, points, stream, ks)
    return Pending(_batch_add_device(pts, idx, stream), lambda a: a.tobytes(), stream)


def msm_bytes(points: DevicePoints, scalars, stream=None, c: int | None = None, variant: str | None = None) -> bytes:
    """GPU buckets and window sums, then the Horner step and affine conversion on the host
    (host_curve.finish_windows: cheaper than one GPU thread). Synchronises `stream`."""
    return msm_launch(points, scalars, stream, c, variant).result()


def msm_g1_gpu(points, scalars, stream=None, c: int | None = None, ks: KernelSettings | None = None) -> bytes:
    """sum_i scalars[i] * points[i] as 96-byte xy (G1Point.to_xy_bytes_le form; identity = zeros).
    points: (n, 96) uint8 xy, or a DevicePoints uploaded earlier (its first len(scalars) points are used)."""
    return msm_bytes(_points("g1", points, stream, ks), scalars, stream, c)


def msm_g2_gpu(points, scalars, stream=None, c: int | None = None, ks: KernelSettings | None = None) -> bytes:
    """G2 MSM; 192-byte xy result (G2Point.to_xy_bytes_le form)."""
    return msm_bytes(_points("g2", points, stream, ks), scalars, stream, c)


def _batch_add_device(points: DevicePoints, idx, stream=None):
    cp = _cp()
    group = points.group
    mod, aw, xw, _ = _GROUPS[group]
    k = lambda name: _gk(group, f"{group}_{name}", ks=points.ks)  # noqa: E731
    with _stream_ctx(stream):
        if isinstance(idx, cp.ndarray):
            d_idx = idx
        else:
            d_idx = cp.asarray(np.asarray(idx))
        if d_idx.dtype == cp.bool_:
            d_idx = cp.nonzero(d_idx)[0]
        d_idx = d_idx.astype(cp.uint32, copy=False)
        m = int(d_idx.shape[0])
        T = 128 * max(1, min(1024, -(-m // (128 * 8))))  # ~8+ mixed adds per thread
        part = cp.empty((T, xw), dtype=cp.uint32)
        k("batch_add")((T // 128,), (128,), (points.d, d_idx, np.uint32(m), part))
        G = 128
        nblk = min(256, T // G)
        per = -(-T // nblk)
        scratch = cp.empty((nblk * G, xw), dtype=cp.uint32)
        mid = cp.empty((nblk, xw), dtype=cp.uint32)
        k("reduce_xyzz")((nblk,), (G,), (part, np.uint32(T), np.uint32(per), scratch, mid))
        one = cp.empty((1, xw), dtype=cp.uint32)
        k("reduce_xyzz")((1,), (G,), (mid, np.uint32(nblk), np.uint32(nblk), scratch, one))
        out = cp.empty((1, aw), dtype=cp.uint32)
        k("xyzz_to_affine")((1,), (1,), (one, np.uint32(1), out))
        return out


def batch_add_g1_gpu(points, idx, stream=None) -> bytes:
    """sum of points[idx] (idx: integer indices, or a boolean mask such as prep_msm's bitmap of
    scalars equal to 1) as 96-byte xy."""
    return _to_bytes(_batch_add_device(_points("g1", points, stream), idx, stream), stream)


def batch_add_g2_gpu(points, idx, stream=None) -> bytes:
    return _to_bytes(_batch_add_device(_points("g2", points, stream), idx, stream), stream)

