"""Host work of one partition, phase by phase, at a number of host threads: the witness, A.z B.z
C.z, synthesis (the two together, what the engine calls), prep_msm, with the buffers a worker
keeps (z and a/b/c made once and reused, as the engine does), and the host RAM one worker holds.

Runs against the `prover` of the tree it sits in (harness puts that tree first on the path), so
the same script, copied into another tree, measures a branch and main (before vs after):

    python3 benchmarks/bench_host_threads.py --sizes 22,24 --threads 1,2 --label after --out A.json
    git archive main | tar -x -C /tmp/c2main && cp benchmarks/bench_host_threads.py /tmp/c2main/benchmarks/
    python3 /tmp/c2main/benchmarks/bench_host_threads.py --sizes 22,24 --label before --out B.json

A tree without host threads (main before issue 41) is measured at 1 thread only (said in the
row). Times are wall clock, medians over --repeat partitions, with the process's CPU seconds
beside them (a shared machine's wall time includes waiting for a core: the load average is
recorded). prep_msm uses the presence bits the matrices imply (tested equal to a real key's),
so no key set-up is needed at 2^24. Constraints per second per core: 2^k / synthesis seconds /
threads (cuzk's witness: 4.9 M/s on one thread, its notes).

RSS a worker: the process's resident bytes after one partition with the worker's buffers held
(z, its classes, a/b/c, prep_msm's splits) minus before them (the circuit and the kernels).

--abc host,gpu (issue 41's a/b/c on the GPU): where the GPU makes a/b/c the host's synthesis is the
witness alone and a worker holds no a/b/c; both arms over one circuit, their partitions
interleaved (gpu first, so its RSS a worker is measured before the a/b/c buffers exist). A tree
without the split (phases.witness) measures host only.
"""
from __future__ import annotations

import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import harness  # noqa: F401  (the repository root on sys.path, unless PYTHONPATH puts another tree first)

import numpy as np  # noqa: E402

import prover  # noqa: E402
from prover.groth16 import phases as P  # noqa: E402
from prover.groth16 import prep_nb, witness_nb  # noqa: E402
from prover.groth16.warm import warm_up  # noqa: E402

HAS_THREADS = "threads" in inspect.signature(P.synthesize).parameters
HAS_WITNESS = hasattr(P, "witness")  # a/b/c made on the GPU: synthesis is the witness alone
CUZK_WITNESS_PER_S = 4.9e6


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall s, process CPU s)."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _kw(threads: int) -> dict[str, int]:
    return {"threads": threads} if HAS_THREADS else {}


def _partition(circuit: Any, present: np.ndarray, bufs: dict, instance: int, threads: int,
               abc: str = "host") -> dict[str, float]:
    """One partition's host phases into the worker's buffers: their wall and CPU seconds (abc gpu:
    synthesis is the witness alone, no A.z B.z C.z on the host)."""
    kw = _kw(threads)
    row: dict[str, float] = {}
    (z, _pub, cls), w, c = _timed(lambda: witness_nb.generate_witness(circuit, instance, bufs["z"], **kw))
    row.update(witness_s=w, witness_cpu_s=c)
    if abc == "gpu":
        row.update(matvec_s=0.0, matvec_cpu_s=0.0)
        syn, w, c = _timed(lambda: P.witness(circuit, instance, z=bufs["z"], **kw))
    else:
        mats = (circuit.a, circuit.b, circuit.c)
        _, w, c = _timed(lambda: [m.matvec_host(z, cls, o, **kw) for m, o in zip(mats, bufs["out"])])
        row.update(matvec_s=w, matvec_cpu_s=c)
        syn, w, c = _timed(lambda: P.synthesize(circuit, instance, out=bufs["out"], z=bufs["z"], **kw))
    row.update(synthesis_s=w, synthesis_cpu_s=c)
    parts, w, c = _timed(lambda: prep_nb.split_arrays(syn.density, syn.z, present, circuit.num_inputs, **kw))
    row.update(prep_msm_s=w, prep_msm_cpu_s=c)
    bufs["prep"] = parts  # held until the next partition, as a worker holds its partition's
    return row


def measure(k: int, threads: list[int], repeat: int, seed: int, arms: list[str]) -> list[dict[str, Any]]:
    """A row an abc arm at 2^k: phases by thread count, RSS a worker."""
    circuit, make_s, _ = _timed(lambda: P.make_circuit(k, seed))
    plans = [m.host_plan for m in (circuit.a, circuit.b, circuit.c)]
    present = prep_nb.presence_from_circuit(circuit)
    bufs: dict[str, dict] = {}
    rss_worker: dict[str, int] = {}
    rss0 = _rss()
    for abc in sorted(arms, key=lambda a: a != "gpu"):  # gpu first: its worker has no a/b/c yet
        b = bufs[abc] = {"z": np.empty((circuit.num_vars, 4), dtype=np.uint64)}
        if abc == "host":
            b["out"] = tuple(np.empty((circuit.domain_size, 4), dtype=np.uint64) for _ in range(3))
        _partition(circuit, present, b, 0, max(threads), abc)  # first touch of every page, and the kernels
        rss_worker[abc] = _rss() - rss0
        rss0 = _rss()
    samples: dict[tuple[str, int], list[dict[str, float]]] = {(a, t): [] for a in arms for t in threads}
    for i in range(repeat):  # arms and thread counts interleaved: the machine's load hits each alike
        for abc in arms:
            for t in threads:
                samples[(abc, t)].append(_partition(circuit, present, bufs[abc], 1 + i, t, abc))
    rows = []
    for abc in arms:
        by_threads = {}
        for t in threads:
            got = samples[(abc, t)]
            med = {key: round(statistics.median(r[key] for r in got), 4) for key in got[0]}
            med["constraints_per_s_per_core"] = round((1 << k) / med["synthesis_s"] / t)
            med["witness_constraints_per_s_per_core"] = round((1 << k) / med["witness_s"] / t)
            med["host_s"] = round(med["synthesis_s"] + med["prep_msm_s"], 4)
            by_threads[str(t)] = med
        rows.append({"size_log2": k, "abc": abc, "num_vars": circuit.num_vars,
                     "nnz": int(sum(len(p.cols) for p in plans)), "make_circuit_s": round(make_s, 2), "repeat": repeat,
                     "by_threads": by_threads, "rss_worker_bytes": rss_worker[abc],
                     "rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                     "load_avg_1m_end": round(os.getloadavg()[0], 2)})
    return rows


def _commit() -> str:
    root = Path(prover.__file__).resolve().parents[1]
    try:
        return subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"(no git: {root})"


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--sizes", default="22,24")
    ap.add_argument("--threads", default="1,2", help="host thread counts (a tree without them: 1 only)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--label", default="", help="before | after: what tree this is")
    ap.add_argument("--abc", default="host", help="host, gpu or host,gpu: where a/b/c are made (gpu: not on the host)")
    a = ap.parse_args()
    threads = [int(x) for x in a.threads.split(",")] if HAS_THREADS else [1]
    arms = [x for x in a.abc.split(",") if x == "host" or (x == "gpu" and HAS_WITNESS)] or ["host"]
    doc: dict[str, Any] = {
        "what": "host work of one partition, phase by phase (native, no modelled time), buffers reused as a worker's",
        "label": a.label, "prover": str(Path(prover.__file__).resolve().parent), "commit": _commit(),
        "host_threads_supported": HAS_THREADS, "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]),
        "machine": harness.machine(), "load_avg_1m_start": round(os.getloadavg()[0], 2),
        "warm_up_s": round(warm_up(), 2), "cuzk_witness_constraints_per_s_per_thread": CUZK_WITNESS_PER_S, "rows": []}
    for k in (int(s) for s in a.sizes.split(",")):
        for row in measure(k, threads, a.repeat, a.seed, arms):
            doc["rows"].append(row)
            print(json.dumps(row), flush=True)
        if a.out:
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(a.out).with_suffix(".tmp")
            tmp.write_text(json.dumps(doc, indent=1) + "\n")
            os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
