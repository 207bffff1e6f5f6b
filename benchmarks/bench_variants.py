"""Old against new kernel settings, side by side on one GPU: every timed call of every variant
interleaved round by round (so a clock or thermal drift hits all alike), median and a 95%
interval of the median per variant, and every variant's result checked equal to the first's.

  python benchmarks/bench_variants.py --out FILE.json [--ntt 22,24] [--ntt-h 24] [--msm 22,24]
      [--msm-pre 24] [--g2 20] [--reps 9] [--deadline EPOCH_S]
      [--variants "base:;eo_k:field_mul=eo_k;r4:ntt_radix=4;..."]

A variant is a name and KernelSettings fields (--variants; the first is the baseline). Each
figure runs only the variants that change its kernels (NTT: field_mul and ntt_radix; MSM:
field_mul); variants equal in those are timed once. Times are CUDA-event intervals on one
non-blocking stream after a warm-up (compilation excluded), in ms:
  ntt_nat   natural-order forward NTT (fused passes; x -> scratch, x unchanged)
  ntt_nr    natural -> bit-reversed forward NTT (DIF passes in place: sppark's ntt_fr_nr figure)
  ntt_h     the NTT-H phase (7 transforms), its input copies excluded (events around the call)
  msm_g1    plain G1 MSM, random full scalars; msm_g1_pre over precomputed window shifts
  msm_g2    plain G2 MSM
The interval: order statistics of the sorted samples (x_(k), x_(n-k+1)) with the largest k whose
binomial coverage is >= 95% (n >= 6; for fewer, min..max with its coverage said).
"""
from __future__ import annotations

import hashlib
import json
import statistics
import sys
import time
from math import comb
from pathlib import Path

import numpy as np

import harness

from prover.field.ref import fr_random
from prover.kernels import msm, ntt
from prover.settings import KernelSettings

DEFAULT_VARIANTS = ("base:;eo_k:field_mul=eo_k;eo_k2:field_mul=eo_k2;eo_sq2:field_mul=eo_sq2;"
                    "r4:ntt_radix=4;eo_k_r4:field_mul=eo_k,ntt_radix=4")
NTT_FIELDS, MSM_FIELDS = ("field_mul", "ntt_radix", "ntt_variant"), ("field_mul", "g1_variant", "g2_variant")


def log(msg: str) -> None:
    print(f"[bench_variants {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def parse_variants(spec: str) -> list[tuple[str, KernelSettings]]:
    out = []
    for part in filter(None, (x.strip() for x in spec.split(";"))):
        name, _, kv = part.partition(":")
        out.append((name, KernelSettings.from_env(**dict(x.split("=", 1) for x in kv.split(",") if x))))
    return out


# field_mul variants whose Fr product (all the NTT uses) is another's: Fe::mul2 is Fp only
SAME_FR = {"eo_k2": "eo_k", "eo_sq2": "eo_sq"}


def distinct(variants, fields) -> list[tuple[str, KernelSettings]]:
    """The variants that differ in `fields` (the first of each kind), in order."""
    seen, out = set(), []
    for name, ks in variants:
        key = tuple(SAME_FR.get(getattr(ks, f), getattr(ks, f)) if f == "field_mul" and fields is NTT_FIELDS
                    else getattr(ks, f) for f in fields)
        if key not in seen:
            seen.add(key)
            out.append((name, ks))
    return out


def interval(xs: list[float]) -> dict:
    """Median and a distribution-free ~95% interval of it (order statistics)."""
    s, n = sorted(xs), len(xs)
    best = None
    for k in range(1, n // 2 + 1):  # interval (x_(k), x_(n-k+1)), 1-based
        cover = 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n
        if cover >= 0.95:
            best = (k, cover)
    k, cover = best or (1, 1 - 2 / 2 ** n)
    return {"median": round(statistics.median(s), 4), "lo": round(s[k - 1], 4), "hi": round(s[n - k], 4),
            "coverage": round(cover, 3), "n": n, "samples": [round(x, 4) for x in xs]}


def digest(arr) -> str:
    import cupy as cp

    return hashlib.sha256(cp.asnumpy(arr).tobytes()).hexdigest()[:16]


def race(label: str, setups: dict, reps: int, stream, res: dict, save) -> dict:
    """setups: name -> (call, result) where call() enqueues one timed call on `stream` and
    returns (start_event, end_event) and result() gives a digest of its output. Interleaved
    rounds of one call each, after one warm-up each."""
    import cupy as cp

    row: dict = {"figure": label, "variants": {}}
    samples: dict[str, list[float]] = {k: [] for k in setups}
    for name, (call, _) in setups.items():  # warm-up (compile, tables)
        call()
    stream.synchronize()
    for _ in range(reps):
        for name, (call, _) in setups.items():
            e0, e1 = call()
            e1.synchronize()
            samples[name].append(cp.cuda.get_elapsed_time(e0, e1))
    base = None
    for name, (_, result) in setups.items():
        d = result()
        row["variants"][name] = {**interval(samples[name]), "result": d}
        base = base or d
        row["variants"][name]["equal_to_first"] = d == base
    first = next(iter(row["variants"].values()))["median"]
    for v in row["variants"].values():
        v["speedup_vs_first"] = round(first / v["median"], 3) if v["median"] else None
    res["figures"].append(row)
    save()
    log(f"{label}: " + ", ".join(f"{k} {v['median']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}]{'' if v['equal_to_first'] else ' DIFFERS'}"
                                 for k, v in row["variants"].items()))
    return row


def events(stream, fn):
    import cupy as cp

    def call():
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(stream)
        fn()
        e1.record(stream)
        return e0, e1
    return call


def ntt_figures(L: int, variants, reps: int, stream, res, save, with_h: bool, rng) -> None:
    import cupy as cp

    n = 1 << L
    with stream:
        x0 = cp.asarray(fr_random(n, rng)).view(cp.uint32).reshape(n, 8)
        if with_h:  # one set of inputs for every variant
            a0, b0, c0 = x0, cp.asarray(fr_random(n, rng)).view(cp.uint32).reshape(n, 8), x0[::-1].copy()
    nat, nr, hh = {}, {}, {}
    for name, ks in distinct(variants, NTT_FIELDS):
        plan = ntt.ntt_plan(L, stream, ks)
        with stream:
            x, tmp, y = x0.copy(), cp.empty_like(x0), x0.copy()
        nat[name] = (events(stream, lambda p=plan, x=x, t=tmp: p.ntt(x, t, fused=True)),
                     lambda p=plan, x=x, t=tmp: digest(p.ntt(x.copy(), t, fused=True)))
        nr[name] = (events(stream, lambda p=plan, y=y: p._run_passes(y, p.tw_fwd, dif=True)),
                    lambda p=plan: digest(_nr_once(p, x0)))
        if with_h:
            with stream:
                a, b, c = cp.empty_like(a0), cp.empty_like(a0), cp.empty_like(a0)

            def one(p=plan, a=a, b=b, c=c, a0=a0, b0=b0, c0=c0):
                import cupy as cp

                a[...] = a0; b[...] = b0; c[...] = c0  # noqa: E702  (not timed: the events follow)
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record(stream)
                p.ntt_h(a, b, c, fused=True)
                e1.record(stream)
                return e0, e1

            def h_result(p=plan, a=a, b=b, c=c, a0=a0, b0=b0, c0=c0):
                a[...] = a0; b[...] = b0; c[...] = c0  # noqa: E702
                return digest(p.ntt_h(a, b, c, fused=True))
            hh[name] = (one, h_result)
    with stream:
        race(f"ntt_nat_2^{L}", nat, reps, stream, res, save)
        race(f"ntt_nr_2^{L}", nr, reps, stream, res, save)
        if with_h:
            race(f"ntt_h_2^{L}", hh, max(3, reps // 2), stream, res, save)
    ntt._plans.clear()
    free_pool()


def _nr_once(plan, x0):
    y = x0.copy()
    plan._run_passes(y, plan.tw_fwd, dif=True)
    return y


def view(points, ks: KernelSettings):
    """The same device points under another build's settings (no copy)."""
    p = msm.DevicePoints.__new__(msm.DevicePoints)
    p.group, p.n, p.pre, p.d, p.ks = points.group, points.n, points.pre, points.d, ks
    return p


def msm_figures(group: str, logs: list[int], pre_logs: list[int], variants, reps: int, stream, res, save, rng,
                deadline) -> None:
    import cupy as cp

    from bench_kernels import random_points

    if not logs and not pre_logs:
        return
    nmax = 1 << max(logs + pre_logs)
    xy, _ = random_points(group, nmax, 4096 if group == "g1" else 1024, 1)
    dp = msm.DevicePoints(group, xy, stream)
    with stream:
        d_s = cp.asarray(fr_random(nmax, rng))
    msm_vars = distinct(variants, MSM_FIELDS)
    for kind, L in [("plain", L) for L in logs] + [("pre", L) for L in pre_logs]:
        if not harness.time_left(deadline, 30):
            res.setdefault("skipped", []).append(f"msm_{group} {kind} 2^{L}: deadline")
            continue
        n = 1 << L
        sub = view(dp, dp.ks)
        sub.n, sub.d = n, dp.d[:n]
        if kind == "pre":
            sub = sub.precompute(stream=stream)  # once, with the default build: the points are the same data
        s = d_s[:n]
        setups = {}
        for name, ks in msm_vars:
            p = view(sub, ks)
            setups[name] = (events(stream, lambda p=p: msm._msm_device(p, s, stream, device_final=False)),
                            lambda p=p: msm.msm_bytes(p, s, stream).hex()[:32])
        with stream:
            race(f"msm_{group}{'_pre' if kind == 'pre' else ''}_2^{L}", setups, reps if L < 24 else max(5, reps // 2),
                 stream, res, save)
        del sub, setups
        free_pool()
    del dp, d_s
    free_pool()


def free_pool() -> None:
    import cupy as cp

    pool = getattr(cp, "get_default_memory_pool", None)  # (the CPU emulator has none)
    if pool is not None:
        pool().free_all_blocks()


def logs(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--variants", default=DEFAULT_VARIANTS)
    ap.add_argument("--ntt", default="22,24")
    ap.add_argument("--ntt-h", default="24", help="sizes (among --ntt) that also time NTT-H")
    ap.add_argument("--msm", default="22,24")
    ap.add_argument("--msm-pre", default="24")
    ap.add_argument("--g2", default="20")
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    import cupy as cp

    variants = parse_variants(args.variants)
    res = {"machine": harness.machine(gpu=True), "command": " ".join(sys.argv),
           "variants": {k: ks.model_dump(exclude_defaults=True) for k, ks in variants}, "figures": []}
    out = Path(args.out)

    def save():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=1))

    stream = cp.cuda.Stream(non_blocking=True)
    rng = np.random.default_rng(38)
    t0 = time.time()
    for L in logs(args.ntt):
        if harness.time_left(args.deadline, 20):
            ntt_figures(L, variants, args.reps, stream, res, save, L in logs(args.ntt_h), rng)
    msm_figures("g1", logs(args.msm), logs(args.msm_pre), variants, args.reps, stream, res, save, rng, args.deadline)
    msm_figures("g2", logs(args.g2), [], variants, args.reps, stream, res, save, rng, args.deadline)
    res["wall_s"] = round(time.time() - t0, 1)
    res["all_equal"] = all(v["equal_to_first"] for f in res["figures"] for v in f["variants"].values())
    save()
    log(f"done in {res['wall_s']} s; every variant equal to the first: {res['all_equal']}")
    return 0 if res["all_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
