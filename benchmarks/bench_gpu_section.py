"""A real partition's whole GPU section on the GPU, with the circuit's bit-heavy witness
(issue 5): NTT-H + the G1 MSMs (H; L, A, B_G1 each as batch addition + tail MSM) + the G2 MSM
(B_G2), timed end to end on one stream, and the proof from them assembled and verified. Setup
runs on the GPU (G1/G2 fixed-base kernels, the Lagrange iNTT) and is timed by part.

    python benchmarks/bench_gpu_section.py --logs 20,22,24 --out FILE.json [--budget-s 300]
        [--reps 3] [--cache-dir DIR]

Per size, one JSON row, rewritten into --out after every stage (so a run cut short keeps what it
measured) and printed when the size is done: make_circuit / setup (by part) / synthesize /
prep_msm seconds; the section's first run (kernel compiles, key upload) and the median of
--reps runs after it, with the split ntt_h / msm_g1 / b_g2 (each phase returns host bytes, so
the split costs no extra synchronisation); batch-add and tail point counts; the GPU memory pool
peak; assemble + verify. Timed, per run, each phase then a stream sync: the upload of a/b/c (the
pre-stage, under the mem lock in the engine), NTT-H on the device, the G1 MSMs, the G2 MSM.
section_s = NTT-H + G1 MSMs (the compute section with b_g2 on the CPU, the default placement);
section_b_g2_gpu_s adds the G2 MSM; section_with_upload_s adds the upload too. The proving key's
queries are uploaded (and the H query's window shifts precomputed) once in the first run, as
every partition shares them.

--budget-s: before a size, its cost is extrapolated from the previous size's measured wall time
(x 2^(dL) * 1.06^dL); a size that would end past the budget is skipped (a row says so) instead of
being killed mid-way. Keys are cached only with --cache-dir (a 2^24 key is ~9 GB).
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

GROWTH = 1.06  # per doubling beyond linear (the sorts and NTTs are n log n)


class Rows:
    def __init__(self, path: Path):
        self.path, self.rows = path, []

    def new(self, L: int) -> dict:
        self.rows.append({"log2": L})
        return self.rows[-1]

    def save(self) -> None:
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.rows, indent=1))
        tmp.replace(self.path)


@contextmanager
def timed(row: dict, key: str, rows: Rows):
    t = time.perf_counter()
    print(f"  2^{row['log2']} {key} ...", flush=True)
    yield
    row[key] = round(time.perf_counter() - t, 4)
    print(f"  2^{row['log2']} {key} {row[key]:.3f} s", flush=True)
    rows.save()


def _setup_parts(S, row: dict):
    """Wrap setup's big parts to time them (same results)."""
    parts = {"lagrange_s": "_lagrange_at", "fixed_g1_s": "_fixed_g1", "fixed_g2_s": "_fixed_g2"}
    saved = {}
    for key, name in parts.items():
        fn = getattr(S, name)
        saved[name] = fn
        row[key] = 0.0

        def wrap(*a, _fn=fn, _key=key):
            t = time.perf_counter()
            try:
                return _fn(*a)
            finally:
                row[_key] = round(row[_key] + time.perf_counter() - t, 4)
        setattr(S, name, wrap)

    def restore():
        for name, fn in saved.items():
            setattr(S, name, fn)
    return restore


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


def stand_in_key(circuit, uniq: int = 4096):
    """A proving key of the circuit's exact shape whose query points are real curve points
    (uniq random ones, tiled) instead of a setup's: the GPU section's work depends on the
    witness and the key's shape, not on which points, and a 2^24 setup costs minutes of device
    time. Proofs made with it do not verify, so the benchmark says which key a row used."""
    import py_arkworks_bls12381 as ark

    from prover.groth16.keys import ProvingKey

    rng = np.random.default_rng(7)

    def pts(G, k: int, rows: int) -> np.ndarray:
        base = np.stack([np.frombuffer((G() * ark.Scalar(int(x))).to_xy_bytes_le(), np.uint8)
                         for x in rng.integers(1, 1 << 62, size=k)])
        return np.tile(base, (-(-rows // k), 1))[:rows].copy()

    nv, ni, n = circuit.num_vars, circuit.num_inputs, circuit.domain_size
    one1, one2 = pts(ark.G1Point, 1, 1)[0], pts(ark.G2Point, 1, 1)[0]
    return ProvingKey(alpha_g1=one1, beta_g1=one1, beta_g2=one2, delta_g1=one1, delta_g2=one2,
                      a_query=pts(ark.G1Point, uniq, nv), b_g1_query=pts(ark.G1Point, uniq, nv),
                      b_g2_query=pts(ark.G2Point, uniq // 4, nv), l_query=pts(ark.G1Point, uniq, nv - ni),
                      h_query=pts(ark.G1Point, uniq, n), num_inputs=ni)


def section(L: int, row: dict, rows: Rows, cache_dir: Path | None, reps: int, stand_in: bool = False,
            variants: list[tuple[str, dict]] = (("env", {}),)) -> None:
    import cupy as cp

    from prover.groth16 import compose
    from prover.groth16 import phases as P
    from prover.groth16 import setup as S
    from prover.kernels.cuda_backend import CudaBackend
    from prover.settings import KernelSettings

    pool = cp.get_default_memory_pool()
    with timed(row, "make_circuit_s", rows):
        circuit = P.make_circuit(L, 0)
    row["num_vars"] = circuit.num_vars
    row["key"] = "stand-in (real points, not from setup; proof not checked)" if stand_in else "setup"
    if stand_in:
        with timed(row, "stand_in_key_s", rows):
            pk, vk = stand_in_key(circuit), None
    else:
        restore = _setup_parts(S, row)
        try:
            with timed(row, "setup_s", rows):
                if cache_dir is not None:
                    pk, vk = P.load_or_setup(circuit, 0, cache_dir=cache_dir, insecure_seeded=True)
                else:
                    pk, vk = S.setup(circuit, insecure_seed=0)
        finally:
            restore()
        row["setup_gpu"] = S.gpu_fixed_base_g2() is not None
    row["setup_pool_peak_bytes"] = int(pool.total_bytes())
    pool.free_all_blocks()
    with timed(row, "synthesize_s", rows):
        syn = P.synthesize(circuit, 1)
    with timed(row, "prep_msm_s", rows):
        prep = P.prep_msm(syn, pk)
    row["batch_add_points"] = {k: len(getattr(prep, k).ones) for k in ("a", "b_g1", "l", "b_g2")}
    row["tail_points"] = {k: len(getattr(prep, k).tail) for k in ("a", "b_g1", "l", "b_g2")}
    rows.save()
    out = None
    for name, given in variants:
        ks = KernelSettings.from_env(**given)
        v = row.setdefault("variants", {}).setdefault(name, {"settings": given})
        fns = compose.GpuCompute.over(CudaBackend(ks))  # its own copy of the key on the device
        res = _time_variant(fns, syn, prep, pk, reps, v, L, name, rows)
        del fns  # the next variant's key copy (and precomputed H) must find the memory free again
        gc.collect()
        pool.free_all_blocks()
        if out is None:
            out, row["split_s"], row["section_s"] = res, v["split_s"], v["section_s"]
            row["section_b_g2_gpu_s"], row["section_with_upload_s"] = v["section_b_g2_gpu_s"], v["section_with_upload_s"]
        else:  # every variant must give the same group elements, bit for bit
            v["equal_to_first"] = _results(res) == _results(out)
        rows.save()
    row["section_pool_peak_bytes"] = int(pool.total_bytes())
    free, total = cp.cuda.runtime.memGetInfo()
    row["device_used_bytes_after"] = int(total - free)
    h, g1, b2 = out
    row["all_variants_equal"] = all(v.get("equal_to_first", True) for v in row["variants"].values())
    row["meets_300ms"] = row["section_s"] <= 0.300
    if vk is None:
        return
    with timed(row, "assemble_verify_s", rows):
        r, s = P.seeded_randomisers(0, 1)
        proof = P.assemble(syn, g1, b2, pk, r, s)
        row["verified"] = bool(P.verify(vk, syn.public_ints(), proof))


def _results(res) -> tuple:
    from prover.backend import settle

    _, g1, b2 = res
    g1 = settle(g1)
    return (g1.h, g1.l, g1.a, g1.b_g1, bytes(settle(b2)))


def _time_variant(fns, syn, prep, pk, reps: int, v: dict, L: int, name: str, rows) -> tuple:
    """reps + 1 sections with one kernel-settings variant (the first compiles and uploads the
    key): each step then a stream sync (the split), and the section enqueued whole as the
    engine runs it (NTT-H, the G1 MSMs launched behind it, B_G2; one wait at the end)."""
    import cupy as cp

    stream = cp.cuda.Stream(non_blocking=True)
    runs, whole, out = [], [], None
    with stream:
        for i in range(reps + 1):
            stream.synchronize()
            t0 = time.perf_counter()
            d_abc = [cp.asarray(x) for x in (syn.a, syn.b, syn.c)]  # the pre-stage's upload
            stream.synchronize()
            t1 = time.perf_counter()
            h = fns.ntt_h(*d_abc)
            stream.synchronize()
            t2 = time.perf_counter()
            g1 = fns.msm_g1(prep, h, pk)
            t3 = time.perf_counter()
            b2 = fns.b_g2_msm(prep, pk)
            stream.synchronize()
            t4 = time.perf_counter()
            runs.append({"upload": t1 - t0, "ntt_h": t2 - t1, "msm_g1": t3 - t2, "b_g2": t4 - t3})
            d_abc = [cp.asarray(x) for x in (syn.a, syn.b, syn.c)]
            stream.synchronize()
            t5 = time.perf_counter()
            out = (fns.ntt_h(*d_abc), fns.msm_g1(prep, h, pk), fns.b_g2_msm(prep, pk))
            stream.synchronize()
            whole.append(time.perf_counter() - t5)
            del d_abc
            print(f"  2^{L} {name} run {i}: " + ", ".join(f"{k} {x:.4f}" for k, x in runs[-1].items())
                  + f", enqueued whole {whole[-1]:.4f}", flush=True)
    timed_runs, whole = runs[1:], whole[1:]
    v["first_split_s"] = {k: round(x, 4) for k, x in runs[0].items()}
    v["split_s"] = {k: round(_median([r[k] for r in timed_runs]), 4) for k in runs[0]}
    # the compute section (what holds the compute lock): NTT-H + G1 MSMs with b_g2 on the CPU
    # (SupraSeal's placement); with b_g2 on the GPU too (the engine's at native sizes)
    v["section_s"] = round(_median([r["ntt_h"] + r["msm_g1"] for r in timed_runs]), 4)
    v["section_b_g2_gpu_s"] = round(_median([r["ntt_h"] + r["msm_g1"] + r["b_g2"] for r in timed_runs]), 4)
    v["section_with_upload_s"] = round(_median([sum(r.values()) for r in timed_runs]), 4)
    v["enqueued_whole_s"] = round(_median(whole), 4)
    rows.save()
    return out


def _variants(spec: str) -> list[tuple[str, dict]]:
    """'old:ntt_fused=0,msm_lanes=1;new:' -> [("old", {...}), ("new", {})] (KernelSettings fields)."""
    out = []
    for part in filter(None, (x.strip() for x in spec.split(";"))):
        name, _, kv = part.partition(":")
        out.append((name, dict(x.split("=", 1) for x in kv.split(",") if x)))
    return out or [("env", {})]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", default="20,22,24")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--budget-s", type=float, default=None, help="skip a size whose extrapolated cost would pass this")
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", default="env:", help="kernel-settings variants timed on the same key and "
                    "witness, e.g. 'old:ntt_fused=0,msm_lanes=1;new:' (results must agree bit for bit)")
    ap.add_argument("--stand-in-from", type=int, default=99,
                    help="sizes from this log2 up use a stand-in key of the right shape (no setup, proof not checked)")
    args = ap.parse_args()
    rows = Rows(Path(args.out))
    start = time.perf_counter()
    prev: tuple[int, float] | None = None
    for L in (int(x) for x in args.logs.split(",")):
        row = rows.new(L)
        elapsed = time.perf_counter() - start
        if args.budget_s is not None and prev is not None:
            dL = L - prev[0]
            estimate = prev[1] * (2 ** dL) * GROWTH ** dL
            row["estimated_s"] = round(estimate, 1)
            if elapsed + estimate > args.budget_s:
                row["skipped"] = f"estimated {estimate:.0f} s from 2^{prev[0]}; {args.budget_s - elapsed:.0f} s of budget left"
                rows.save()
                print(json.dumps(row), flush=True)
                continue
        t = time.perf_counter()
        try:
            section(L, row, rows, Path(args.cache_dir) if args.cache_dir else None, args.reps, L >= args.stand_in_from,
                    _variants(args.variants))
        except Exception as exc:  # record and go on: the next size may still fit
            row["error"] = f"{type(exc).__name__}: {exc}"
        row["wall_s"] = round(time.perf_counter() - t, 2)
        prev = (L, row["wall_s"])
        rows.save()
        print(json.dumps(row), flush=True)
        gc.collect()
        try:
            import cupy as cp

            cp.get_default_memory_pool().free_all_blocks()
        except Exception:
            pass
    bad = [r["log2"] for r in rows.rows if "section_s" in r and r["key"] == "setup" and not r.get("verified")]
    assert not bad, f"proofs from the GPU section did not verify at 2^{bad}"


if __name__ == "__main__":
    main()
