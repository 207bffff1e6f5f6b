"""Benchmark of the host (CPU) phases of one partition with the compiled nogil kernels
(prover/host): per size, each phase's milliseconds per partition on one thread, the
aggregate partitions/s with N threads each running whole partitions, and the numpy
reference's figures side by side at the smaller sizes (same bytes checked).

    python3 benchmarks/bench_cpu_phases.py --sizes 16,18,20 --threads 2 --json
    python3 benchmarks/bench_cpu_phases.py --sizes 20,22,24 --threads 16 --json --out results.json

Per partition on the host: synthesize (witness, then A.z, B.z, C.z), prep_msm (density
classes and the MSM splits), randomisers, assemble and verify. The last three cost the
same at every size (a fixed number of group operations and one 4-pairing check), so they
are measured once, on a real 2^10 key. make_circuit, the kernels' matrix plans and the key
(setup or load, and its presence bits) are once per run and reported as such. Sizes above
--keys-max use the presence bits the matrices imply (tested equal to real keys') instead of
a setup; prep_msm's per-partition work is the same. Rows are written to --out (the whole
document, rewritten) as each size completes; times are wall clock (medians) with the
thread's CPU time beside them (on a shared machine the wall time includes waiting for a core).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

import numba  # noqa: E402
import numpy as np  # noqa: E402

from prover.groth16 import phases as P  # noqa: E402
from prover.groth16 import prep_nb as host_prep  # noqa: E402
from prover.groth16.warm import warm_up  # noqa: E402
from prover.groth16 import witness_nb as host_witness  # noqa: E402


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall ms, thread CPU ms)."""
    w, c = time.perf_counter(), time.thread_time()
    out = fn()
    return out, (time.perf_counter() - w) * 1e3, (time.thread_time() - c) * 1e3


def _median(samples: dict[str, list[float]]) -> dict[str, float]:
    return {k: round(statistics.median(v), 2) for k, v in samples.items()}


def jit_seconds() -> dict[str, float]:
    """warm_up() in a fresh process with an empty numba cache (full compile), then here (cached)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=tmp,  # this checkout first, then whatever the caller had
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        code = "from prover.groth16.warm import warm_up; print(warm_up())"
        cold = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    return {"compile_cold_s": round(cold, 2), "warm_up_cached_s": round(warm_up(), 3)}


def constant_costs(seed: int, repeat: int, cache_dir: Path | None) -> dict[str, Any]:
    """randomisers, assemble and verify on a real 2^10 proof (their cost does not grow with size)."""
    circuit = P.make_circuit(10, seed)
    pk, vk = P.load_or_setup(circuit, seed, cache_dir)
    syn = P.synthesize(circuit, 0)
    prep = P.prep_msm(syn, pk)
    g1, b2 = P.msm_g1(prep, P.ntt_h(syn.a, syn.b, syn.c), pk), P.b_g2_msm(prep, pk)
    samples: dict[str, list[float]] = {"randomisers": [], "assemble": [], "verify": []}
    cpu: dict[str, list[float]] = {k: [] for k in samples}
    for i in range(max(3, repeat)):
        (r, s), w, c = _timed(lambda: P.randomisers(seed, i))
        samples["randomisers"].append(w), cpu["randomisers"].append(c)
        proof, w, c = _timed(lambda: P.assemble(syn, g1, b2, pk, r, s))
        samples["assemble"].append(w), cpu["assemble"].append(c)
        ok, w, c = _timed(lambda: P.verify(vk, syn.public_ints(), proof))
        assert ok, "the benchmark's proof did not verify"
        samples["verify"].append(w), cpu["verify"].append(c)
    return {"size_log2": 10, "ms": _median(samples), "cpu_ms": _median(cpu), "verified": True}


def _prep_fn(circuit: Any, k: int, seed: int, keys_max: int, cache_dir: Path | None) -> tuple[Callable, dict[str, Any]]:
    """prep_msm for this size: with a real key up to keys_max, else from the structural presence."""
    info: dict[str, Any] = {}
    if k <= keys_max:
        (pk, _), w, _c = _timed(lambda: P.load_or_setup(circuit, seed, cache_dir))
        _, pw, _c = _timed(lambda: host_prep.presence(pk))
        info.update(key="real (load_or_setup)", key_ms=round(w, 1), presence_ms=round(pw, 1))
        return (lambda syn: P.prep_msm(syn, pk)), info | {"pk": pk}
    present, pw, _c = _timed(lambda: host_prep.presence_from_circuit(circuit))
    info.update(key="structural presence (no setup)", presence_ms=round(pw, 1))

    def prep(syn: P.Synthesis) -> P.MsmPrep:
        parts = host_prep.split_arrays(syn.density, syn.z, present, circuit.num_inputs)
        a, b_g1, b_g2, l = (P.QuerySplit(*p) for p in parts)
        return P.MsmPrep(density=syn.density, a=a, b_g1=b_g1, b_g2=b_g2, l=l)

    return prep, info


def _abc(circuit: Any) -> dict[str, Any]:
    """A worker's buffers as the engine keeps them (z, and a, b, c from CudaDevice.host_out:
    allocated once, reused by every partition), touched once so their pages exist."""
    n = len(circuit.a.indptr) - 1
    return {"out": tuple(np.ones((n, 4), dtype=np.uint64) for _ in range(3)),
            "z": np.ones((circuit.num_vars, 4), dtype=np.uint64)}


def _threads(circuit: Any, prep: Callable, threads: int, partitions: int, reuse: bool = False) -> dict[str, float]:
    """partitions whole host sections (synthesize + prep_msm) on `threads` worker threads;
    reuse: each thread writes a, b, c into its own set, as the engine's workers do."""
    local = threading.local()

    def one(instance: int) -> None:
        if reuse and not hasattr(local, "abc"):
            local.abc = _abc(circuit)
        prep(P.synthesize(circuit, instance, **local.abc) if reuse else P.synthesize(circuit, instance))

    t0, c0 = time.perf_counter(), os.times()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(100, 100 + partitions)))
    wall, c1 = time.perf_counter() - t0, os.times()
    busy = (c1.user + c1.system - c0.user - c0.system) / wall
    return {"threads": threads, "partitions": partitions, "wall_s": round(wall, 3),
            "partitions_per_s": round(partitions / wall, 3), "cores_busy": round(busy, 2)}


def measure_size(k: int, a: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"size_log2": k, "native": True}
    circuit, w, _ = _timed(lambda: P.make_circuit(k, a.seed))
    _, pw, _ = _timed(lambda: [m.host_plan for m in (circuit.a, circuit.b, circuit.c)])
    prep, info = _prep_fn(circuit, k, a.seed, a.keys_max, a.cache_dir)
    pk = info.pop("pk", None)
    row["once"] = {"make_circuit_ms": round(w, 1), "matrix_plans_ms": round(pw, 1)} | info
    row["shape"] = {"num_vars": circuit.num_vars, "nnz_a": circuit.a.nnz, "nnz_b": circuit.b.nnz, "nnz_c": circuit.c.nnz}
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}

    def rec(name: str, fn: Callable[[], Any]) -> Any:
        out, w_, c_ = _timed(fn)
        wall.setdefault(name, []).append(w_), cpu.setdefault(name, []).append(c_)
        return out

    for i in range(a.repeat):
        z, _pub, cls = rec("witness", lambda: host_witness.generate_witness(circuit, i))
        for name in ("a", "b", "c"):
            m = getattr(circuit, name)
            rec(f"matvec_{name}", lambda: m.matvec_host(z, cls))
        del z, cls
        syn = rec("synthesize", lambda: P.synthesize(circuit, i))
        rec("prep_msm", lambda: prep(syn))
        for d in (wall, cpu):
            d.setdefault("synthesize+prep_msm", []).append(d["synthesize"][-1] + d["prep_msm"][-1])
        del syn
        # the engine's way: z, a, b, c into the worker's reused set (no fresh pages to fault in)
        abc = abc if i else _abc(circuit)
        syn = rec("synthesize_reused", lambda: P.synthesize(circuit, i, **abc))
        rec("prep_msm_2", lambda: prep(syn))
        for d in (wall, cpu):
            d.setdefault("synthesize+prep_msm_reused", []).append(d["synthesize_reused"][-1] + d["prep_msm_2"][-1])
        del syn
    row["one_thread_ms"], row["one_thread_cpu_ms"] = _median(wall), _median(cpu)
    row["one_thread_partitions_per_s"] = round(1e3 / row["one_thread_ms"]["synthesize+prep_msm"], 3)
    row["host_share_cpu"] = _shares(row["one_thread_cpu_ms"], a.constant_cpu_ms)
    if k <= a.reference_max:
        row["reference"] = _reference(circuit, pk, min(2, a.repeat))
        row["speedup_vs_reference"] = round(row["reference"]["ms"]["synthesize+prep_msm"] / row["one_thread_ms"]["synthesize+prep_msm"], 1)
    row["threaded"] = _threads(circuit, prep, a.threads, a.partitions or 2 * a.threads)
    row["threaded"]["vs_one_thread"] = round(row["threaded"]["partitions_per_s"] / row["one_thread_partitions_per_s"], 2)
    row["one_thread_partitions_per_s_reused"] = round(1e3 / row["one_thread_ms"]["synthesize+prep_msm_reused"], 3)
    row["threaded_reused"] = _threads(circuit, prep, a.threads, a.partitions or 2 * a.threads, reuse=True)
    row["threaded_reused"]["vs_one_thread"] = round(
        row["threaded_reused"]["partitions_per_s"] / row["one_thread_partitions_per_s_reused"], 2)
    row["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    row["load_avg_1m"] = round(os.getloadavg()[0], 2)
    return row


def _shares(cpu_ms: dict[str, float], constant: dict[str, float]) -> dict[str, float]:
    """Each host phase's share of a partition's host CPU time, largest first (which dominate)."""
    parts = {k: cpu_ms[k] for k in ("witness", "matvec_a", "matvec_b", "matvec_c", "prep_msm")} | constant
    total = sum(parts.values()) or 1.0
    return {k: round(v / total, 3) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])}


def _reference(circuit: Any, pk: Any, repeat: int) -> dict[str, Any]:
    """The numpy reference (synthesize_reference; prep_msm_reference where there is a key),
    and whether its arrays equal the kernels'."""
    wall: dict[str, list[float]] = {"synthesize": [], "prep_msm": [], "synthesize+prep_msm": []}
    same = True
    for i in range(repeat):
        ref, w, _ = _timed(lambda: P.synthesize_reference(circuit, i))
        native = P.synthesize(circuit, i)
        same &= all(np.array_equal(getattr(ref, f), getattr(native, f)) for f in ("z", "public_inputs", "a", "b", "c"))
        wall["synthesize"].append(w)
        pw = 0.0
        if pk is not None:
            rp, pw, _ = _timed(lambda: P.prep_msm_reference(ref, pk))
            np_ = P.prep_msm(native, pk)
            same &= all(np.array_equal(getattr(getattr(rp, q), f), getattr(getattr(np_, q), f))
                        for q in ("a", "b_g1", "b_g2", "l") for f in ("ones", "tail", "tail_scalars"))
        wall["prep_msm"].append(pw)
        wall["synthesize+prep_msm"].append(w + pw)
    return {"ms": _median(wall), "prep_msm_measured": pk is not None, "same_arrays": bool(same)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="16,18,20", help="comma-separated log2 sizes")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--partitions", type=int, default=0, help="partitions in the threaded run (default 2 x threads)")
    ap.add_argument("--repeat", type=int, default=3, help="one-thread partitions per size (medians)")
    ap.add_argument("--reference-max", type=int, default=18, help="largest size that also runs the numpy reference")
    ap.add_argument("--keys-max", type=int, default=12, help="largest size given a real key (setup or cache)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="key cache (default: the prover's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print each size's row as a JSON line")
    ap.add_argument("--no-jit-probe", action="store_true", help="skip the cold-compile measurement")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    host = platform.node().split(".")[0] or "host"
    now = datetime.now(timezone.utc)
    out = a.out or ROOT / "benchmarks" / "results" / f"cpu_phases_{host}_{now:%Y%m%d}.json"
    doc: dict[str, Any] = {
        "what": "host phases per partition, compiled nogil kernels (native, no modelled time)",
        "date": now.isoformat(timespec="seconds"), "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]),
        "machine": {**harness.machine(), "host": host, "numpy": np.__version__, "numba": numba.__version__},
        "jit": None if a.no_jit_probe else jit_seconds(),
        "constant_cost_phases": constant_costs(a.seed, a.repeat, a.cache_dir),
        "rows": [],
    }
    if a.no_jit_probe:
        doc["jit"] = {"warm_up_s": round(warm_up(), 3)}
    a.constant_cpu_ms = doc["constant_cost_phases"]["cpu_ms"]
    _emit(doc, doc["jit"] | {"constant_cost_phases": doc["constant_cost_phases"]}, out, a.json)
    for k in sizes:
        row = measure_size(k, a)
        doc["rows"].append(row)
        _emit(doc, row, out, a.json)


def _emit(doc: dict[str, Any], row: dict[str, Any], out: Path, as_json: bool) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, out)
    print(json.dumps(row) if as_json else json.dumps(row, indent=1), flush=True)


if __name__ == "__main__":
    main()
