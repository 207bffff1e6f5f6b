"""Issue 41, z uploaded compactly: a partition's VRAM plan and upload with abc gpu, before (z whole
and a class byte a variable) and after (z's upload form, prover/host/zpack.py), and how many plans
fit on an H200 beside the resident key and the circuit's matrices. No device needed:

    python benchmarks/zpack_plan.py --out benchmarks/results/issue41/zpack_plan.json \
        [--sizes 22,24,27] [--build 16,20,22] [--reps 5]

Per size in --sizes, arithmetic from the circuit layout (`circuit.family_counts`: its variables and
field variables, exact; no circuit built): the plan before (d_a + d_bc + z 32 B a variable + z_cls 1 B),
after (`Sizing.buffers`), the upload a partition before and after (the form: its table and every
field value), the resident matrices (35.51 B a row, measured at 2^20 and 2^22), and the plans that
fit in the 2^27 scripts' budget (scale_parts.card_budget of the 59.0 GiB measured free after the
2^27 set-up on the H200: 35 GiB) beside them.

Per size in --build (built here, real witnesses): the form made by the compiled pack (its time on
one thread and two, median of --reps, wall and CPU ms), its count against `Circuit.field_vars`,
and the plan allocated and the form uploaded through a `CudaDevice` over the CPU emulator of CuPy
(tests/helpers/cudaemu): the bytes each buffer's allocation holds and the bytes copied up, from
the worker's page-locked arrays (`host_zpack`). The emulator is no GPU: its times are not figures.
"""
from __future__ import annotations

import statistics
import sys
import threading
import time
from typing import Any

import numpy as np

import harness  # noqa: F401  (the repository root on sys.path)
import scale_parts as SP

GIB = 1 << 30
MATRIX_BYTES_PER_ROW = 35.51  # the three matrices' device form (measured at 2^20 and 2^22, RESULTS)
H200_FREE_AFTER_SETUP = 59.0 * GIB  # docs/scale.md, measured 2026-12-03 with the 2^27 key resident


def layout_row(log2: int) -> dict[str, Any]:
    """The plan and upload a partition at 2^log2 from the layout's counts."""
    from prover.device.budget import Sizing
    from prover.device.profiles import get_profile
    from prover.groth16.circuit import family_counts

    nv, nf = family_counts(log2)
    native = get_profile("native")
    host = Sizing(native, log2).buffers
    after = Sizing(native, log2, abc="gpu", variables=nv, field_vars=nf).buffers
    before = {**host, "z": 32 * nv, "z_cls": nv}
    matrices = int(MATRIX_BYTES_PER_ROW * (1 << log2))
    budget = SP.card_budget(int(H200_FREE_AFTER_SETUP), 27)
    fit = {k: (budget - matrices) // sum(p.values()) for k, p in (("before", before), ("after", after))}
    return {"log2": log2, "variables": nv, "field_vars": nf, "plan_before": before, "plan_after": after,
            "plan_before_bytes": sum(before.values()), "plan_after_bytes": sum(after.values()),
            "plan_before_gib": round(sum(before.values()) / GIB, 3), "plan_after_gib": round(sum(after.values()) / GIB, 3),
            "upload_before_bytes": before["z"] + before["z_cls"], "upload_after_bytes": after["z"] + after["z_cls"],
            "upload_abc_host_bytes": host["d_a"] + host["d_bc"], "matrices_bytes_est": matrices,
            "h200_budget_gib": budget / GIB, "plans_fit_h200": fit if log2 == 27 else None}


def _timed(fn: Any, reps: int) -> tuple[Any, float, float]:
    walls, cpus, out = [], [], None
    for _ in range(reps):
        w, c = time.perf_counter(), time.thread_time()
        out = fn()
        walls.append((time.perf_counter() - w) * 1e3)
        cpus.append((time.thread_time() - c) * 1e3)
    return out, round(statistics.median(walls), 2), round(statistics.median(cpus), 2)


def built_row(log2: int, reps: int) -> dict[str, Any]:
    """A real circuit and witness: the pack's time and count, the plan through the emulated device."""
    from prover.groth16 import phases as P
    from prover.host import zpack_nb

    circuit = P.make_circuit(log2, 0)
    syn = P.witness(circuit, 1)
    row: dict[str, Any] = {"log2": log2, "variables": circuit.num_vars, "field_vars": circuit.field_vars}
    for threads in (1, 2):
        zp, wall, cpu = _timed(lambda t=threads: zpack_nb.pack(syn.z, syn.density, circuit.field_vars, threads=t), reps)
        row[f"pack_{threads}t_ms"] = {"wall": wall, "cpu": cpu}
    _, wall, cpu = _timed(lambda: P.witness(circuit, 2, z=syn.z, cls=syn.density), max(1, reps // 2))
    row["witness_1t_ms"] = {"wall": wall, "cpu": cpu}
    row["field_values"], row["fits"], row["upload_bytes"] = zp.count, zp.fits, zp.upload_bytes
    row["emulated"] = emulated_plan(circuit, syn)
    return row


def emulated_plan(circuit: Any, syn: Any) -> dict[str, Any]:
    """The plan allocated and z's form uploaded through a CudaDevice over the CuPy emulator."""
    from tests.helpers.cudaemu import MODULES, available

    if not available():
        return {"skipped": "g++ not installed (the emulator)"}
    saved = {k: sys.modules.get(k) for k in MODULES}
    sys.modules.update(MODULES)
    try:
        return _emulated(circuit, syn)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _emulated(circuit: Any, syn: Any) -> dict[str, Any]:
    from prover.device.budget import Sizing
    from prover.device.cuda import CudaDevice
    from prover.device.profiles import get_profile
    from prover.host import zpack_nb

    sizing = Sizing(get_profile("native"), circuit.constraints_log2, abc="gpu", variables=circuit.num_vars,
                    field_vars=circuit.field_vars)
    dev = CudaDevice(0, get_profile("native"), 4 * sizing.need, lambda *a, **k: None, threading.Event(), nvml=False)
    stream = dev.stream("g0w0")
    pinned = dev.host_zpack("g0w0", circuit.num_vars, circuit.field_vars)
    assert pinned is not None
    zp = zpack_nb.pack(syn.z, syn.density, circuit.field_vars, out=pinned)
    bufs = [dev.alloc("g0w0", "p0", name, n, stream) for name, n in sizing.buffers.items()]
    by = {b.name: b for b in bufs}
    puts = [(by["z"], 0, zp.vals[: zp.count]), (by["z_cls"], 0, zp.tab)]
    dev.wait(dev.upload(stream, puts, 0.0))
    back = np.asarray(dev.view(by["z_cls"], zp.tab.shape, np.uint32))
    out = {"allocated": {b.name: int(b.handle.mem.size) for b in bufs}, "plan": sizing.buffers,
           "copied_bytes": int(sum(a.nbytes for _, _, a in puts)), "from_page_locked": all(dev._pinned(a) for a in pinned),
           "table_read_back_equal": bool(np.array_equal(back, zp.tab))}
    for b in bufs:
        dev.free(b, stream)
    dev.close()
    return out


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--sizes", default="22,24,27")
    ap.add_argument("--build", default="16,20,22")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    rows = harness.Rows(a.out, machine=harness.machine(), what="issue 41: z's upload form, the plan and upload a "
                        "partition (arithmetic from the layout; built sizes measured here, the device emulated)")
    for log2 in (int(x) for x in a.sizes.split(",") if x):
        row = rows.new(kind="layout", **layout_row(log2))
        rows.save()
        print(f"2^{log2}: plan {row['plan_before_bytes']:,} -> {row['plan_after_bytes']:,} B "
              f"({row['plan_before_gib']} -> {row['plan_after_gib']} GiB); upload {row['upload_before_bytes']:,} -> "
              f"{row['upload_after_bytes']:,} B; plans that fit on the H200: {row['plans_fit_h200']}", flush=True)
    for log2 in (int(x) for x in a.build.split(",") if x):
        row = rows.new(kind="built", **built_row(log2, a.reps))
        rows.save()
        print(f"2^{log2} built: {row}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
