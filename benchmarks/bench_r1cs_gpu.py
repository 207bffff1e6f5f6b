"""The R1CS products of one partition on the host (the compiled nogil kernel, one thread, as a
worker runs them) against the GPU kernel (prover/kernels/r1cs.py), with the uploads each needs:
the host path uploads a, b, c (3 x 32 B a row), the GPU path z's upload form (prover/host/zpack.py:
its classes as bits with ranks, 12 B a 32 variables, and its field values packed, 32 B each), made
on the host by the compiled pack (timed here too, one thread).

  python benchmarks/bench_r1cs_gpu.py --log 22 --out FILE.json [--reps 5] [--deadline EPOCH_S]
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import harness

from prover.groth16 import phases as P
from prover.host import zpack_nb


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--log", type=int, default=22)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    import cupy as cp

    from prover.kernels.r1cs import device_matrix, matvec_gpu

    rows = harness.Rows(args.out, machine=harness.machine(gpu=True))
    row = rows.new(log2=args.log)
    t = time.perf_counter()
    circuit = P.make_circuit(args.log, 0)
    mats = (circuit.a, circuit.b, circuit.c)
    plans = [m.host_plan for m in mats]
    row["make_circuit_and_plans_s"] = round(time.perf_counter() - t, 2)
    z = np.zeros((circuit.num_vars, 4), np.uint64)
    syn = P.synthesize(circuit, 1, z=z)
    row["nnz"] = [int(len(p.cols)) for p in plans]
    host, host_cpu = [], []
    for _ in range(args.reps):
        w, c = time.perf_counter(), time.thread_time()
        for m in mats:
            m.matvec_host(syn.z, syn.density)
        host.append((time.perf_counter() - w) * 1e3)
        host_cpu.append((time.thread_time() - c) * 1e3)
    row["host_matvecs_ms"], row["host_matvecs_cpu_ms"] = round(statistics.median(host), 2), round(statistics.median(host_cpu), 2)
    packs = []
    for _ in range(args.reps):
        w = time.perf_counter()
        zp = zpack_nb.pack(syn.z, syn.density, circuit.field_vars)
        packs.append((time.perf_counter() - w) * 1e3)
    row["host_pack_ms"], row["field_values"] = round(statistics.median(packs), 2), zp.count
    stream = cp.cuda.Stream(non_blocking=True)
    t = time.perf_counter()
    dms = [device_matrix(p, stream) for p in plans]
    stream.synchronize()
    row["device_plans_s"], row["device_plans_mib"] = round(time.perf_counter() - t, 2), sum(d.nbytes for d in dms) >> 20
    outs = [cp.empty((d.rows, 4), cp.uint64) for d in dms]
    gpu, upload = [], []
    for i in range(args.reps + 1):
        e0, e1, e2 = cp.cuda.Event(), cp.cuda.Event(), cp.cuda.Event()
        with stream:
            e0.record(stream)
            d_vals, d_tab = cp.asarray(zp.vals[: zp.count]), cp.asarray(zp.tab)
            e1.record(stream)
            for d, o in zip(dms, outs):
                matvec_gpu(d, d_vals, d_tab, stream, out=o)
            e2.record(stream)
        e2.synchronize()
        if i:  # the first compiles
            upload.append(cp.cuda.get_elapsed_time(e0, e1))
            gpu.append(cp.cuda.get_elapsed_time(e1, e2))
    row["gpu_matvecs_ms"], row["gpu_upload_zpack_ms"] = round(statistics.median(gpu), 3), round(statistics.median(upload), 3)
    row["equal"] = all(np.array_equal(cp.asnumpy(o), w) for o, w in zip(outs, (syn.a, syn.b, syn.c)))
    row["upload_bytes"] = {"host_path_abc": int(3 * syn.a.nbytes), "gpu_path_zpack": zp.upload_bytes,
                           "z_and_classes_whole": int(syn.z.nbytes + syn.density.nbytes)}
    rows.save()
    print(row, flush=True)
    return 0 if row["equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
