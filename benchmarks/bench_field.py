"""Micro-benchmark and correctness check of the field product variants of prover/kernels/cuda/field.cuh
(-DFIELD_MUL=<variant>) on the visible GPU.

  python benchmarks/bench_field.py --out FILE.json [--variants cios,eo,...] [--n 65536] [--dry-run]

For each variant, benchmarks/field_bench.cu is compiled with NVRTC (cupy.RawModule, options
as prover.kernels.loader: -I kernels -std=c++17, plus -DFP_MUL_CALL=1 like the MSM builds and
-DFIELD_MUL=<variant>; C2TUI_NVRTC_OPTS is ignored here), then:
  (i)  correctness: mont(a, b) = a*b*R^-1 and squares of --n random Fr and Fp elements plus edge
       values (0, 1, 2, m-1, m-2, (m+-1)/2, 2^32-1, 2^64, m-2^32, R mod m, ...) against Python
       integers; the throughput kernels' outputs are checked too (x * (y/R)^iters) on a sample;
  (ii) throughput: each thread runs 4 independent chains of dependent products (Fr; Fp through
       Fp::mul = the non-inlined call of the MSM builds; Fp inlined; Fr and Fp squarings through
       Fe::sqr, a mul(a, a) except in eo_sq), grid = 8 blocks of 256 per
       SM; products/s from the best of 3 timed runs (CUDA events) after a warm-up.
Writes one JSON; exits 1 if any variant computed a wrong value (or failed to compile).
--dry-run (no GPU needed): compiles field_bench.cu for every variant with the local nvcc
(-arch=sm_90) and self-checks the host-side packing and reference arithmetic.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover.kernels.loader import CUDA_DIR, headers_digest  # noqa: E402
from prover.field.ref import P_MOD, R_MOD  # noqa: E402

VARIANTS = ("cios", "ptx", "cios_v", "eo", "eo_r", "eo_c", "eo_sq", "eo_k", "eo_k2", "eo_sq2")
FIELDS = {"fr": (R_MOD, 8), "fp": (P_MOD, 12)}
CHAIN_K = 4
ITERS = {"fr_chain": 512, "fp_chain_call": 256, "fp_chain_inline": 256, "fr_sqr_chain": 512, "fp_sqr_chain": 256}


def log(msg: str) -> None:
    print(f"[bench_field {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def to_limbs(vals: list[int], n_limbs: int) -> np.ndarray:
    nb = 4 * n_limbs
    buf = b"".join(v.to_bytes(nb, "little") for v in vals)
    return np.frombuffer(buf, dtype="<u4").reshape(len(vals), n_limbs).copy()


def from_limbs(arr: np.ndarray) -> list[int]:
    arr = np.ascontiguousarray(arr, dtype="<u4")
    nb = arr.shape[1] * 4
    raw = arr.tobytes()
    return [int.from_bytes(raw[i:i + nb], "little") for i in range(0, len(raw), nb)]


def edge_values(m: int, n_limbs: int) -> list[int]:
    R = 1 << (32 * n_limbs)
    return [0, 1, 2, 3, m - 1, m - 2, (m - 1) // 2, (m + 1) // 2, (1 << 32) - 1, 1 << 32, 1 << 64,
            m - (1 << 32), R % m, (R * R) % m, m - (R % m), (1 << (32 * n_limbs - 8)) % m, m >> 1, m >> 32]


def inputs(m: int, n_limbs: int, n: int, rng: random.Random) -> tuple[list[int], list[int]]:
    ev = edge_values(m, n_limbs)
    a = [x for x in ev for _ in ev] + [rng.randrange(m) for _ in range(n)]
    b = [y for _ in ev for y in ev] + [rng.randrange(m) for _ in range(n)]
    return a, b


def want(op: int, a: list[int], b: list[int], m: int, rinv: int) -> list[int]:
    """What field_bench.cu's *_elem kernels compute for op 0 (mul), 1 (sqr), 2 (mul_sub)."""
    if op == 0:
        return [x * y * rinv % m for x, y in zip(a, b)]
    if op == 1:
        return [x * x * rinv % m for x in a]
    return [(x * y - y * a[(i + 1) % len(a)]) * rinv % m for i, (x, y) in enumerate(zip(a, b))]


def options(variant: str) -> tuple[str, ...]:
    opts = ["-I" + str(CUDA_DIR), "-std=c++17", "-DFP_MUL_CALL=1", "-DFIELD_MUL=" + variant]
    arch = os.environ.get("C2TUI_NVRTC_ARCH")
    if arch:
        opts.append("--gpu-architecture=" + arch)
    return tuple(opts)


def source(nonce: str) -> str:
    # headers' hash + a nonce: CuPy's disk cache keys on the text, and we want the real compile time
    return f"// headers {headers_digest()} {nonce}\n" + (Path(__file__).with_name("field_bench.cu")).read_text()


def dry_run(variants: list[str]) -> int:
    rng = random.Random(5)
    for name, (m, nl) in FIELDS.items():
        a, b = inputs(m, nl, 1000, rng)
        assert from_limbs(to_limbs(a, nl)) == a and all(x < m for x in a + b), name
    log("host packing and inputs ok")
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    bad = 0
    with tempfile.TemporaryDirectory() as td:
        for v in variants:
            out = Path(td) / f"{v}.cubin"
            t0 = time.time()
            r = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-Xptxas", "-v", *options(v), "-o", str(out),
                                str(Path(__file__).with_name("field_bench.cu"))], capture_output=True, text=True)
            ok = r.returncode == 0
            bad += not ok
            log(f"{v}: nvcc {'ok' if ok else 'FAILED'} in {time.time() - t0:.1f}s")
            if not ok:
                print(r.stderr[-3000:])
    return 1 if bad else 0


def fn_info(fn) -> dict:
    info = {}
    for k in ("num_regs", "local_size_bytes", "max_threads_per_block"):
        try:
            info[k] = int(getattr(fn, k))
        except Exception:
            pass
    return info


def run_variant(variant: str, n: int, seed: int) -> dict:
    import cupy as cp

    res: dict = {"flags": f"-DFIELD_MUL={variant}", "nvrtc_options": list(options(variant)), "correct": False}
    t0 = time.time()
    try:
        mod = cp.RawModule(code=source(f"{variant} {time.time_ns()}"), options=options(variant), backend="nvrtc")
        mod.compile()
    except Exception as e:  # a variant that does not compile is a failure, keep going
        res["error"] = f"compile: {e.__class__.__name__}: {str(e)[-2000:]}"
        log(f"{variant}: COMPILE FAILED")
        return res
    res["compile_s"] = round(time.time() - t0, 2)
    log(f"{variant}: compiled in {res['compile_s']} s")
    rng = random.Random(seed)
    errors = {}
    kern_info = {}
    for name, (m, nl) in FIELDS.items():
        rinv = pow(1 << (32 * nl), -1, m)
        a, b = inputs(m, nl, n, rng)
        da, db = cp.asarray(to_limbs(a, nl)), cp.asarray(to_limbs(b, nl))
        dout = cp.empty_like(da)
        k = mod.get_function(f"{name}_elem")
        kern_info[f"{name}_elem"] = fn_info(k)
        cnt = len(a)
        for op, opname in ((0, "mul"), (1, "sqr"), (2, "mul_sub")):
            k(((cnt + 255) // 256,), (256,), (da, db, dout, np.int32(cnt), np.int32(op)))
            got, w = from_limbs(cp.asnumpy(dout)), want(op, a, b, m, rinv)
            wrong = [i for i, (g, x) in enumerate(zip(got, w)) if g != x]
            errors[f"{name}_{opname}"] = len(wrong)
            if wrong:
                i = wrong[0]
                log(f"{variant}: {name} {opname} WRONG at {len(wrong)} of {cnt}, e.g. a={a[i]:#x} b={b[i]:#x} "
                    f"got={got[i]:#x} want={w[i]:#x}")
    # throughput
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    blocks, tpb = 8 * sms, 256
    threads = blocks * tpb
    thr = {}
    for kname, field in (("fr_chain", "fr"), ("fp_chain_call", "fp"), ("fp_chain_inline", "fp"),
                         ("fr_sqr_chain", "fr"), ("fp_sqr_chain", "fp")):
        m, nl = FIELDS[field]
        rinv = pow(1 << (32 * nl), -1, m)
        iters = ITERS[kname]
        k = mod.get_function(kname)
        kern_info[kname] = fn_info(k)
        x0 = np.random.default_rng(seed).integers(0, 2**32, size=(threads * CHAIN_K, nl), dtype=np.uint32)
        x0[:, -1] &= np.uint32((m >> (32 * (nl - 1))) - 1)  # < m
        y = rng.randrange(m)
        dy = cp.asarray(to_limbs([y], nl))
        dx = cp.asarray(x0)
        args = (dx, dy, np.int32(iters))
        k((blocks,), (tpb,), args)  # warm-up (also the checked run)
        cp.cuda.Device().synchronize()
        got = cp.asnumpy(dx)
        sample = list(range(0, threads * CHAIN_K, max(1, threads * CHAIN_K // 4096)))
        gx, x0s = from_limbs(got[sample]), from_limbs(x0[sample])
        if "sqr" in kname:  # x^(2^iters) * R^-(2^iters - 1)
            e = 1 << iters
            c = pow(rinv, e - 1, m)
            nbad = sum(1 for g, x in zip(gx, x0s) if g != pow(x, e, m) * c % m)
        else:
            c = pow(y * rinv % m, iters, m)
            nbad = sum(1 for g, x in zip(gx, x0s) if g != x * c % m)
        errors[kname] = nbad
        if nbad:
            log(f"{variant}: {kname} WRONG chain results: {nbad} of {len(sample)} sampled")
        times = []
        for _ in range(3):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            k((blocks,), (tpb,), args)
            e1.record()
            e1.synchronize()
            times.append(cp.cuda.get_elapsed_time(e0, e1))
        best = min(times)
        prods = threads * CHAIN_K * iters
        thr[kname] = {"products_per_s": prods / (best * 1e-3), "ms": round(best, 3), "threads": threads,
                      "chains_per_thread": CHAIN_K, "iters": iters}
        log(f"{variant}: {kname:16s} {prods / (best * 1e-3):.3e} products/s ({best:.2f} ms)")
    res["errors"] = errors
    res["correct"] = all(v == 0 for v in errors.values())
    res["throughput"] = thr
    res["products_per_s"] = {k: v["products_per_s"] for k, v in thr.items()}
    res["kernels"] = kern_info
    log(f"{variant}: {'correct' if res['correct'] else 'WRONG'}")
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="JSON file to write")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--n", type=int, default=1 << 16, help="random products/squares per field (plus edge values)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variants {unknown}; known: {VARIANTS}")
    if args.dry_run:
        return dry_run(variants)
    import cupy as cp

    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    out = {"device": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
           "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(), "cupy": cp.__version__, "seed": seed,
           "n": args.n, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "variants": {}}
    log(f"device {out['device']}, seed {seed}, variants {variants}")
    t0 = time.time()
    for v in variants:
        out["variants"][v] = run_variant(v, args.n, seed)
    out["total_s"] = round(time.time() - t0, 1)
    ok = all(r["correct"] for r in out["variants"].values())
    out["all_correct"] = ok
    log("summary (products/s):  fr | fp call | fp inline | fr sqr | fp sqr (call)")
    for v, r in out["variants"].items():
        p = r.get("products_per_s", {})
        log(f"  {v:8s} {'ok   ' if r['correct'] else 'WRONG'} {p.get('fr_chain', 0):.3e} | "
            f"{p.get('fp_chain_call', 0):.3e} | {p.get('fp_chain_inline', 0):.3e} | "
            f"{p.get('fr_sqr_chain', 0):.3e} | {p.get('fp_sqr_chain', 0):.3e}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1))
        log(f"wrote {args.out} ({out['total_s']} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
