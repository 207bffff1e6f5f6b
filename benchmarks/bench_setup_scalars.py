"""The key setup's scalars side by side: compiled (prover/groth16/setup_scalars_nb.py, what setup
runs now) against the numpy field code (what it ran before), same inputs, one process, the
outputs compared.

    python3 benchmarks/bench_setup_scalars.py --log2 22 [--out FILE.json]

Rows: random u, v, w of 2^log2 values (the number of variables is about the number of
constraints in this circuit), ni = 1, and the 2^log2 - 1 powers of tau for H.
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
from prover.groth16 import setup_scalars_nb as S  # noqa: E402


def numpy_path(u, v, w, alpha, beta, gamma, delta, ni, tau, k):  # noqa: ANN001, ANN201 - setup's code before
    r = fr.R_MOD
    c = fr.add(fr.add(fr.mul_const(u, beta), fr.mul_const(v, alpha)), w)
    ic, lq = fr.mul_const(c[:ni], pow(gamma, -1, r)), fr.mul_const(c[ni:], pow(delta, -1, r))
    return np.concatenate([ic, lq]), fr.from_mont_mul_const(fr.mont_powers(tau, len(u) - 1), k)


def compiled_path(u, v, w, alpha, beta, gamma, delta, ni, tau, k):  # noqa: ANN001, ANN201
    return S.combo(u, v, w, alpha, beta, gamma, delta, ni), S.powers_times(tau, len(u) - 1, k)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2", type=int, default=20)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    n = 1 << a.log2
    u, v, w = fr.random(n, 1), fr.random(n, 2), fr.random(n, 3)
    consts = [int(x) for x in fr.to_ints(fr.random(6, 4))]
    args = (u, v, w, *consts[:4], 1, consts[4], consts[5])
    compiled_path(*(x[:64] if isinstance(x, np.ndarray) else x for x in args))  # numba compile / cache load
    res = {"log2": a.log2, "cpus": os.cpu_count(), "fr_threads": blocks.threads(), "when": time.strftime("%Y-%m-%d %H:%M:%S"),
           "what": "setup's scalars (combo over 2^log2 rows, 2^log2 - 1 powers), seconds wall, native"}
    t0 = time.perf_counter()
    got = compiled_path(*args)
    res["compiled_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    want = numpy_path(*args)
    res["numpy_s"] = time.perf_counter() - t0
    res["equal"] = bool(all(np.array_equal(g, x) for g, x in zip(got, want)))
    print(f"2^{a.log2} setup scalars, {res['fr_threads']} threads: compiled {res['compiled_s']:.2f}s vs numpy "
          f"{res['numpy_s']:.2f}s = {res['numpy_s'] / res['compiled_s']:.1f}x, equal {res['equal']}", flush=True)
    if a.out:
        a.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
