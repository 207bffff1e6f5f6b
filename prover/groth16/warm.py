"""Warm-up of the compiled host kernels of a partition (numba, ``nogil=True``, ``cache=True``):
witness generation (witness_nb), the sparse products A.z, B.z, C.z (prover.host.matvec),
prep_msm's splits (prep_nb), z's upload form (prover.host.zpack_nb) and the GPU MSMs' last host step (prover.field.fp_nb). Each call is single-threaded and releases the GIL,
so worker threads running whole partitions, and a partition's host threads (prover/host/threads.py), really run in parallel.

The kernels compile on first use (a few seconds per process, then ~0.1-0.5 s from numba's
on-disk cache); ``warm_up()`` pays that once, e.g. at engine or benchmark start.
"""
from __future__ import annotations

import time


def warm_up() -> float:
    """Compile (or load from numba's cache) every host kernel on the smallest circuit;
    returns the seconds it took. Safe to call from any thread, any number of times."""
    from prover.groth16.circuit import MIN_LOG2, make_circuit
    import numpy as np

    from prover.field import fp_nb
    from prover.groth16 import prep_nb as prep
    from prover.groth16 import witness_nb as witness
    from prover.host import matvec, zpack_nb

    t0 = time.perf_counter()
    circuit = _smallest(MIN_LOG2, make_circuit)
    z, _, cls = witness.generate_witness(circuit, 0)
    for m in (circuit.a, circuit.b, circuit.c):
        matvec.matvec(m.host_plan, z, cls)
        matvec.matvec(m.host_plan, z, cls, threads=2)  # the row-range kernel host_threads > 1 runs
    prep.density(z)
    prep.warm_up(cls, z)
    zpack_nb.pack(z, cls, circuit.field_vars)
    zpack_nb.pack(z, cls, circuit.field_vars, threads=2)
    for group, width in (("g1", 48), ("g2", 96)):  # the GPU MSMs' last host step
        fp_nb.finish_windows(np.zeros((2, width), dtype=np.uint32), 1, group)
    return time.perf_counter() - t0


_circuits: dict[int, object] = {}


def _smallest(k: int, make):  # type: ignore[no-untyped-def]
    if k not in _circuits:
        _circuits[k] = make(k, 0)
    return _circuits[k]
