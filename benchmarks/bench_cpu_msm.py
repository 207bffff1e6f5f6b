"""G1 or G2 MSM on all of a machine's cores with py_arkworks, beside the GPU MSM, in one run.

    python benchmarks/bench_cpu_msm.py --logs 20,22,24 --out FILE.json
    python benchmarks/bench_cpu_msm.py --group g2 --logs 18,20,22 --out FILE.json

py_arkworks' multiexp uses one core per call, so the CPU baseline splits the points into one
chunk per core (worker processes, forked after the inputs exist), runs a multiexp per chunk
and adds the partial sums: the fair "that machine's cores" figure. Timed: the multiexps and
the final sum (point objects are built before the clock starts, as a prover with its key
loaded would have them). The GPU side is `msm_g1_gpu` on preuploaded points, timed with
CUDA events, the median of 3 after a warm-up. Both results are compared.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

_XY: np.ndarray | None = None
_SC: bytes | None = None
_GROUP = "g1"


def _ark_group():
    import py_arkworks_bls12381 as ark

    return ark.G1Point if _GROUP == "g1" else ark.G2Point


def _chunk(bounds: tuple[int, int]) -> tuple[bytes, float]:
    import py_arkworks_bls12381 as ark

    lo, hi = bounds
    G = _ark_group()
    pts = [G.from_xy_bytes_unchecked_le(_XY[i].tobytes()) for i in range(lo, hi)]
    sc = [ark.Scalar.from_le_bytes(_SC[32 * i:32 * i + 32]) for i in range(lo, hi)]
    t0 = time.perf_counter()
    r = G.multiexp_unchecked(pts, sc)
    return r.to_compressed_bytes(), time.perf_counter() - t0


def cpu_msm(xy: np.ndarray, scalars: np.ndarray, procs: int, group: str = "g1") -> tuple[bytes, float, float]:
    """(xy result bytes, wall seconds of the parallel multiexps + sum, max chunk seconds)."""
    global _XY, _SC, _GROUP
    _XY, _SC, _GROUP = xy, scalars.tobytes(), group
    G = _ark_group()
    n = xy.shape[0]
    cuts = np.linspace(0, n, procs + 1).astype(int)
    ctx = mp.get_context("fork")
    with ctx.Pool(procs) as pool:
        t0 = time.perf_counter()
        parts = pool.map(_chunk, list(zip(cuts[:-1], cuts[1:])))
        acc = G.identity()
        for b, _ in parts:
            acc = acc + G.from_compressed_bytes_unchecked(b)
        wall = time.perf_counter() - t0
    return acc.to_xy_bytes_le(), wall, max(s for _, s in parts)


def gpu_msm(xy: np.ndarray, scalars: np.ndarray, group: str = "g1", precompute: bool = False) -> dict:
    """The GPU MSM on preuploaded points, median of 3 CUDA-event timings; with precompute also
    over the points' precomputed window shifts (DevicePoints.precompute, timed once: it is a
    once-per-key cost)."""
    import cupy as cp

    from prover.kernels import msm

    stream = cp.cuda.Stream(non_blocking=True)
    dp = msm.DevicePoints(group, xy, stream)
    d_sc = cp.asarray(scalars)
    msm_fn = msm.msm_g1_gpu if group == "g1" else msm.msm_g2_gpu

    def timed(points) -> tuple[bytes, float]:
        out = msm_fn(points, d_sc, stream)  # warm-up (compiles)
        times = []
        for _ in range(3):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record(stream)
            out = msm_fn(points, d_sc, stream)
            e1.record(stream)
            e1.synchronize()
            times.append(cp.cuda.get_elapsed_time(e0, e1) / 1000)
        return out, sorted(times)[1]

    res: dict = {}
    res["out"], res["gpu_s"] = timed(dp)
    if precompute:
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(stream)
        pre = dp.precompute(stream=stream)
        e1.record(stream)
        e1.synchronize()
        res["precompute_s"] = cp.cuda.get_elapsed_time(e0, e1) / 1000
        res["pre_c"], res["pre_windows"] = pre.pre
        res["pre_mib"] = pre.nbytes >> 20
        res["out_pre"], res["gpu_pre_s"] = timed(pre)
        del pre
    del dp
    cp.get_default_memory_pool().free_all_blocks()
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", default="20,22,24")
    ap.add_argument("--group", choices=("g1", "g2"), default="g1")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--precompute", action="store_true", help="also time MSMs over precomputed window shifts")
    args = ap.parse_args()
    from bench_kernels import random_points

    from prover.field import fr

    rows = []
    for L in (int(x) for x in args.logs.split(",")):
        n = 1 << L
        xy, _ = random_points(args.group, n, 4096, L)
        sc = fr.random(n, 1000 + L)
        g = gpu_msm(xy, sc, args.group, args.precompute)
        c_out, c_s, c_chunk = cpu_msm(xy, sc, args.procs, args.group)
        row = {"group": args.group, "log2": L, "gpu_s": g["gpu_s"], "cpu_s": c_s, "cpu_max_chunk_s": c_chunk,
               "procs": args.procs, "speedup": c_s / g["gpu_s"], "equal": g["out"] == c_out}
        if args.precompute:
            row |= {k: g[k] for k in ("gpu_pre_s", "precompute_s", "pre_c", "pre_windows", "pre_mib")}
            row |= {"speedup_pre": c_s / g["gpu_pre_s"], "equal_pre": g["out_pre"] == c_out}
        rows.append(row)
        print(json.dumps(row), flush=True)
        Path(args.out).write_text(json.dumps({"rows": rows, "cpus": os.cpu_count()}, indent=1))
    assert all(r["equal"] and r.get("equal_pre", True) for r in rows), "GPU and CPU MSM differ"


if __name__ == "__main__":
    main()
