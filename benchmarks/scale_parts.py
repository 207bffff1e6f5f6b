"""The pieces of benchmarks/scale_native.py (issue 37): memory peaks sampled in the background,
what a size needs on the host and the device, the kernels' compile, and one proof's GPU phases
timed one primitive at a time (the seed's categories: NTT-H, the H MSM, batch additions, tail
MSMs, B over G2), every proof verified by the independent verifier (py_arkworks' pairing)."""
from __future__ import annotations

import os
import threading
import time
from typing import Any

GIB = 1 << 30


def meminfo() -> dict[str, int]:
    """/proc/meminfo's MemTotal and MemAvailable, in bytes (empty where there is none)."""
    out: dict[str, int] = {}
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                key, rest = line.split(":", 1)
                if key in ("MemTotal", "MemAvailable"):
                    out[key] = int(rest.split()[0]) * 1024
    except OSError:
        pass
    return out


def rss() -> int:
    """This process's resident bytes."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def device_used(gpu: int = 0) -> tuple[int, int]:
    """(used, total) bytes of the device, from the CUDA runtime (what every process holds)."""
    import cupy as cp

    with cp.cuda.Device(gpu):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(total - free), int(total)


class Peaks:
    """Peak host RSS, host RAM in use (all processes) and device memory in use, per section
    (mark() starts one), sampled every `period` seconds on a thread of its own."""

    def __init__(self, period: float = 0.25) -> None:
        self.section, self.period = "start", period
        self.peaks: dict[str, dict[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="peaks", daemon=True)
        self._thread.start()

    def mark(self, section: str) -> None:
        self.sample()
        self.section = section

    def sample(self) -> None:
        m = meminfo()
        row = {"host_rss_gib": rss() / GIB,
               "host_used_gib": (m.get("MemTotal", 0) - m.get("MemAvailable", 0)) / GIB}
        try:
            row["device_used_gib"] = device_used()[0] / GIB
        except Exception:  # no device, or it is failing: the host figures still count
            pass
        p = self.peaks.setdefault(self.section, {})
        for k, v in row.items():
            p[k] = round(max(p.get(k, 0.0), v), 2)

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.sample()

    def close(self) -> dict[str, dict[str, float]]:
        self._stop.set()
        self._thread.join(2)
        self.sample()
        return self.peaks

    def overall(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for p in list(self.peaks.values()):
            for k, v in p.items():
                out[k] = max(out.get(k, 0.0), v)
        return out


def needs(log2: int, num_vars: int | None = None) -> dict[str, float]:
    """GiB a size needs: device at the set-up's peak (the resident key, the scalars in flight,
    the NTT plan's twiddles) and then for proving (+ the MSM scratch of the H query and one
    partition's pre-stage), host for building the circuit (measured ~260 B a row at the peak)
    plus one proof's buffers. The arithmetic of docs/scale.md."""
    n = 1 << log2
    nv = num_vars or int(0.9503 * n)
    key = (nv * (3 * 96 + 192) + n * 96) / GIB  # A, B_G1, L, H in G1, B_G2 in G2 (L ~ nv)
    scalars = 5 * 32 * n / GIB  # lag, u, v, w, combo at once at most
    twiddles = 64 * n / GIB
    # the H MSM's scratch (W = 16 windows, pieces of 32): digits + entries at the scatter, then
    # entries + the first level's XYZZ piece sums
    msm = max(2 * 16 * n * 4, 16 * n * 4 + 16 * n / 32 * 192) / GIB
    return {"device_setup": key + scalars + twiddles, "device_prove": key + twiddles + msm + 96 * n / GIB,
            "key_device": key, "msm_scratch": msm, "host_circuit": 260 * n / GIB,
            "host_proof": (64 * nv + 96 * n) / GIB}


# The VRAM a 2^27 run gives its partitions (docs/scale.md, "Device memory at 2^27"). On the H200
# (140.4 GiB) the resident key (69.0), the NTT plan (8.0) and the context leave 59.0 GiB free after
# the set-up (measured, 2026-12-03). Outside the budget: the H MSM's scratch (20 GiB, CuPy's pool)
# and MARGIN_GIB for what else the compute section takes from the pool (the tail MSMs', batch
# additions' and B over G2's transients, ~2 GiB) and the pools' rounding. Inside it: the circuit's
# matrices (abc gpu, 4.44 GiB) and the partitions' plans: 12.19 GiB each with z's upload form
# (d_a 4 + d_bc 8 + z's field values 0.14 + its table 0.04), so 59.0 - 20 - 4 = 35 GiB holds two
# (28.8 GiB) and not three (41.0): a pre-stage overlaps the compute holder, as two-lock needs. With
# z whole (33 B a variable: a 15.92 GiB plan) two needed 36.3 GiB: a 2 GiB margin, nothing for the
# pool's transients. abc host: 12.0 GiB a plan, no matrices: two fit, not three.
MARGIN_GIB = 4.0


def card_budget(free: int, log2: int, margin_gib: float = MARGIN_GIB) -> int:
    """The partitions' VRAM budget: `free` device bytes after the set-up, less the H MSM's scratch
    and `margin_gib`, in whole GiB (0 where nothing is left)."""
    return max(0, int((free - (needs(log2)["msm_scratch"] + margin_gib) * GIB) // GIB) * GIB)


def room(circuit: Any, budget: int | str, abc: str, log2: int | None = None) -> dict[str, Any]:
    """The VRAM arithmetic before a run: a partition's plan by buffer (Sizing.buffers for this
    circuit), the resident matrices (abc gpu), how many plans the budget holds beside them."""
    from prover.device.budget import Sizing
    from prover.device.profiles import get_profile
    from prover.pipeline.gpu.resident import matrix_bytes

    L = circuit.constraints_log2 if log2 is None else log2
    plan = Sizing(get_profile("native"), L, abc=abc, variables=int(circuit.num_vars),
                  field_vars=int(getattr(circuit, "field_vars", 0)) or None).buffers
    resident = sum(matrix_bytes(circuit).values()) if abc == "gpu" else 0
    fits = (budget - resident) // sum(plan.values()) if isinstance(budget, int) else None
    return {"plan_bytes": plan, "plan_gib": round(sum(plan.values()) / GIB, 2), "resident_gib": round(resident / GIB, 2),
            "budget_gib": round(budget / GIB, 1) if isinstance(budget, int) else budget, "plans_that_fit": fits}


def compile_kernels(ks: Any) -> dict[str, float]:
    """Seconds to compile (or load from CuPy's cache) each CUDA module the run uses."""
    from prover.kernels import loader
    from prover.kernels.msm import _defines

    out = {}
    for mod, defines in (("ntt.cu", ()), ("msm_g1.cu", _defines("g1", ks=ks)), ("msm_g2.cu", _defines("g2", ks=ks)),
                         ("setup.cu", ())):
        t0 = time.perf_counter()
        loader.get_module(mod, tuple(defines), ks)
        out[mod] = round(time.perf_counter() - t0, 2)
    return out


def _sync() -> None:
    import cupy as cp

    cp.cuda.get_current_stream().synchronize()


def _timed(fn: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    _sync()
    return out, time.perf_counter() - t0


def prove_and_time(P: Any, circuit: Any, pk: Any, vk: Any, ks: Any, reps: int = 2, instance: int = 1) -> dict[str, Any]:
    """One real proof of `instance` with the CUDA backend, its phases timed one primitive at a
    time (synchronised after each; the first repetition includes first-use costs, the last is
    reported): host synthesis and prep_msm, NTT-H on the uploaded a, b, c, the H MSM, the batch
    additions and tail MSMs of L, A, B_G1, and B over G2 (batch addition + tail). The proof is
    assembled from the last repetition and verified."""
    import cupy as cp

    from prover.groth16 import compose
    from prover.kernels.cuda_backend import CudaBackend

    bk = CudaBackend(ks)
    keys = compose.KeyPoints(bk)
    row: dict[str, Any] = {}
    t0 = time.perf_counter()
    syn = P.synthesize(circuit, instance)
    row["synthesis_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    prep = P.prep_msm(syn, pk)
    row["prep_msm_s"] = time.perf_counter() - t0
    (q, row["key_points_s"]) = _timed(lambda: keys.of(pk))
    r, s = P.randomisers()  # fresh from the OS: a real proof
    for rep in range(reps):
        d, row["upload_s"] = _timed(lambda: [cp.asarray(x) for x in (syn.a, syn.b, syn.c)])
        h, row["ntt_h_s"] = _timed(lambda: bk.ntt_h_staged(*d))
        hm, row["h_msm_s"] = _timed(lambda: bk.msm(q["h"], h[: len(pk.h_query)], "g1").fetch())
        del d
        parts: dict[str, list[Any]] = {}
        row["batch_add_s"] = row["tail_msm_s"] = 0.0
        for name in compose.G1_QUERIES:
            sp, got = getattr(prep, name), parts.setdefault(name, [])
            if len(sp.ones):
                b, dt = _timed(lambda sp=sp, name=name: bk.batch_add(q[name], sp.ones, "g1").fetch())
                got.append(b)
                row["batch_add_s"] += dt
            if len(sp.tail):
                t, dt = _timed(lambda sp=sp, name=name: bk.msm(q[name], sp.tail_scalars, "g1", rows=sp.tail).fetch())
                got.append(t)
                row["tail_msm_s"] += dt
        (b2, row["b_g2_s"]) = _timed(lambda: [p.fetch() for p in compose._split(bk, q["b_g2"], prep.b_g2, "g2")])
        row["section_s"] = row["ntt_h_s"] + row["h_msm_s"] + row["batch_add_s"] + row["tail_msm_s"] + row["b_g2_s"]
    sums = {name: compose.add_g1([bytes(f()) for f in fs]) for name, fs in parts.items()}
    g1 = compose.G1Msms(h=bytes(hm()), l=sums["l"], a=sums["a"], b_g1=sums["b_g1"])
    t0 = time.perf_counter()
    proof = P.assemble(syn, g1, compose.add_g2([bytes(f()) for f in b2]), pk, r, s)
    row["verified"] = bool(P.verify(vk, syn.public_ints(), proof))
    row["verify_s"] = time.perf_counter() - t0
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}


def host_key_round_trip(pk: Any, ks: Any) -> dict[str, float]:
    """A resident key's queries downloaded to the host (what key_resident=host keeps: its GiB and
    seconds), then uploaded as the MSMs' points again (what a host key costs each device once)."""
    import dataclasses

    from prover.groth16 import compose
    from prover.kernels.cuda_backend import CudaBackend

    t0 = time.perf_counter()
    host = {name: a.to_host() for name, a in pk.arrays().items() if hasattr(a, "to_host")}
    down = time.perf_counter() - t0
    hk = dataclasses.replace(pk, presence=None, **host)
    keys = compose.KeyPoints(CudaBackend(ks.model_copy(update={"msm_precompute": "none"})))
    _, up = _timed(lambda: keys.of(hk))
    return {"host_gib": round(hk.nbytes / GIB, 2), "download_s": round(down, 2), "upload_s": round(up, 2)}


def cpu_count() -> int:
    return os.cpu_count() or 1
