"""The key setup's QAP products side by side: A^T, B^T, C^T times the Lagrange values by the
compiled host kernel in row blocks (what setup runs now) and by the numpy reference (what it
ran before), on the same circuit and values in one process, the outputs compared.

    python3 benchmarks/bench_setup_qap.py --log2 24 [--out FILE.json] [--deadline EPOCH_S]

Prints seconds per matrix for each path and writes the rows to --out as they are made; the
reference (slow) runs second, and is skipped past --deadline. Threads: fr's pool (all cores
unless C2TUI_FR_THREADS says otherwise), for both paths.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

import numpy as np  # noqa: E402

from prover.field import blocks, fr  # noqa: E402
from prover.settings import KernelSettings  # noqa: E402

blocks.configure(KernelSettings.from_env().fr_thread_count())  # C2TUI_FR_THREADS, as the engine does
from prover.groth16 import phases as P  # noqa: E402
from prover.groth16 import setup  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2", type=int, default=20)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--deadline", type=float, default=None)
    a = ap.parse_args(argv)
    res: dict = {"log2": a.log2, "cpus": os.cpu_count(), "fr_threads": blocks.threads(), "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                 "what": "setup's QAP products m^T . lagrange, native (no model), seconds wall per matrix"}

    def save() -> None:
        if a.out:
            a.out.write_text(json.dumps(res, indent=1))

    t0 = time.perf_counter()
    circuit = P.make_circuit(a.log2, 1)
    res["circuit_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    lag = setup._lagrange_at(123456789, circuit.domain_size)
    res["lagrange_s"] = time.perf_counter() - t0
    setup._transpose_times(P.make_circuit(10, 1).a, fr.random(1 << 10, 1))  # numba compile / cache load
    got = {}
    for name in "abc":
        t0 = time.perf_counter()
        got[name] = setup._transpose_times(getattr(circuit, name), lag)
        res[f"compiled_{name}_s"] = time.perf_counter() - t0
        print(f"2^{a.log2} {name}: compiled {res[f'compiled_{name}_s']:.2f}s", flush=True)
        save()
    for name in "abc":
        if a.deadline and time.time() > a.deadline:
            print(f"{name}: reference skipped (deadline)", flush=True)
            continue
        t0 = time.perf_counter()
        want = getattr(circuit, name).transpose().matvec(lag)  # the numpy reference setup ran before
        res[f"reference_{name}_s"] = time.perf_counter() - t0
        res[f"equal_{name}"] = bool(np.array_equal(want, got[name]))
        print(f"2^{a.log2} {name}: reference {res[f'reference_{name}_s']:.2f}s, equal {res[f'equal_{name}']}", flush=True)
        save()
    c = sum(res.get(f"compiled_{n}_s", 0) for n in "abc")
    r = [res.get(f"reference_{n}_s") for n in "abc"]
    res["compiled_s"] = c
    if all(x is not None for x in r):
        res["reference_s"] = sum(r)
        print(f"2^{a.log2} QAP products: compiled {c:.1f}s vs reference {sum(r):.1f}s = {sum(r) / c:.1f}x", flush=True)
    save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
