"""Batched fixed-base scalar multiplication on the GPU (setup of large keys): out[i] = s_i * B
for one base B and many scalars, G1 (`fixed_base_g1_gpu`) and G2 (`fixed_base_g2_gpu`).

Kernels: fixed_base.cuh, instantiated as g1_fixed_base (msm_g1.cu) and g2_fixed_base
(msm_g2.cu). Per base, a table of d * 2^(8w) * B (w < 32 byte-windows, d < 256; 8192 points,
made with py_arkworks in ~0.1 s, uploaded once per device and kept); a scalar is then at most
32 mixed additions, and each thread converts its FB_K results to affine with one shared
inversion (Montgomery's trick).

Formats are the project's: scalars FrArray (n, 4) uint64 canonical (or any array with the same
bytes, numpy or cupy); G1 xy (n, 96) uint8, G2 xy (n, 192) uint8 (x.c0, x.c1, y.c0, y.c1),
48-byte LE coordinates, identity = zeros (what a zero scalar gives).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from prover.kernels.cupy_util import _as_u32_rows, _cp, _stream_ctx
from prover.kernels.msm import DevicePoints, _gk
from prover.settings import KernelSettings

if TYPE_CHECKING:  # the binding itself loads with the first table
    from py_arkworks_bls12381 import G1Point, G2Point

FB_K = 8  # outputs a thread; must equal FB_K in fixed_base.cuh (the kernels' default)
FB_TPB = 128
TABLE_WINDOWS = 32  # byte-windows of a 256-bit scalar
_BYTES = {"g1": 96, "g2": 192}

P = TypeVar("P", "G1Point", "G2Point")  # one group at a time: G1 + G2 is not defined

# a base's table on a device, by (device id, group, base bytes, the settings it was uploaded with)
_tables: dict[tuple[int, str, bytes, KernelSettings | None], DevicePoints] = {}
_tables_lock = threading.Lock()


def _base_bytes(base_xy) -> bytes:
    """A base point's xy bytes from bytes or a uint8 array (np.asarray would parse bytes as a
    number literal)."""
    if isinstance(base_xy, (bytes, bytearray, memoryview)):
        return bytes(base_xy)
    return np.asarray(base_xy, dtype=np.uint8).tobytes()


def _fill_windows(rows: list[bytes], bw: P) -> None:
    """rows[w*256 + d] = d * 2^(8w) * bw's xy bytes, d in 1..255 (one group at a time)."""
    for w in range(TABLE_WINDOWS):
        acc = bw
        rows[w * 256 + 1] = acc.to_xy_bytes_le()
        for d in range(2, 256):
            acc = acc + bw
            rows[w * 256 + d] = acc.to_xy_bytes_le()
        bw = acc + bw  # 256 * bw


def fixed_base_table(group: str, base_xy) -> np.ndarray:
    """tab[w*256 + d] = d * 2^(8w) * B as canonical xy bytes (8192, 96 or 192); d = 0 -> zeros."""
    import py_arkworks_bls12381 as ark

    nbytes = _BYTES[group]
    base = _base_bytes(base_xy)
    if len(base) != nbytes:
        raise ValueError(f"a {group} base is {nbytes} bytes, got {len(base)}")
    rows = [bytes(nbytes)] * (TABLE_WINDOWS * 256)
    if group == "g1":
        _fill_windows(rows, ark.G1Point.from_xy_bytes_unchecked_le(base))
    else:
        _fill_windows(rows, ark.G2Point.from_xy_bytes_unchecked_le(base))
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(TABLE_WINDOWS * 256, nbytes).copy()


def _table_on_device(group: str, base: bytes, stream: object, ks: KernelSettings | None = None) -> DevicePoints:
    cp = _cp()
    key = (cp.cuda.Device().id, group, base, ks)
    with _tables_lock:
        tab = _tables.get(key)
        if tab is None:
            tab = _tables[key] = DevicePoints(group, fixed_base_table(group, base), stream, ks)
    return tab


def fixed_base_threads(n: int) -> int:
    """Threads launched for n outputs (a multiple of FB_TPB, at least ceil(n / FB_K))."""
    per = -(-max(n, 1) // FB_K)
    return -(-per // FB_TPB) * FB_TPB


def fixed_base_gpu(group: str, base_xy, scalars, stream=None, out_device: bool = False, ks=None):
    """[s_i * B] as (n, 96|192) uint8 xy: numpy (synchronises `stream` for the download), or a
    cupy array with out_device=True (no synchronisation)."""
    cp = _cp()
    nbytes = _BYTES[group]
    base = _base_bytes(base_xy)
    with _stream_ctx(stream):
        tab = _table_on_device(group, base, stream, ks)
        s = _as_u32_rows(scalars, 8, stream, copy=False)
        n = int(s.shape[0])
        words = nbytes // 4
        out = cp.empty((n, words), dtype=cp.uint32)
        if n:
            T = fixed_base_threads(n)
            _gk(group, f"{group}_fixed_base", ks=tab.ks)((T // FB_TPB,), (FB_TPB,), (tab.d, s, np.uint32(n), out))
        out8 = out.view(cp.uint8).reshape(n, nbytes)
        if out_device:
            return out8
        return cp.asnumpy(out8, stream=stream)


def fixed_base_g1_gpu(base_xy, scalars, stream=None, out_device: bool = False):
    """[s_i * B for s_i in scalars] as (n, 96) uint8 xy (numpy; cupy with out_device=True)."""
    return fixed_base_gpu("g1", base_xy, scalars, stream, out_device)


def fixed_base_g2_gpu(base_xy, scalars, stream=None, out_device: bool = False):
    """[s_i * B for s_i in scalars] as (n, 192) uint8 xy (x.c0, x.c1, y.c0, y.c1; numpy, or cupy
    with out_device=True)."""
    return fixed_base_gpu("g2", base_xy, scalars, stream, out_device)
