"""Native engine runs (issue 12): real kernels, profile native, several Engine configs back to back
in ONE process, so the circuit and its keys are built once.

    python3 benchmarks/bench_native.py --log2 22 --seconds 25 --out-dir $OUT/work [--workers 8]
        [--runs single,device,stream] [--budgets card,tight] [--two-gpu auto|on|off]
        [--deadline EPOCH_S] [--backend cuda|sim]

Each run: Engine(RunConfig(profile native, modelled_log2 = constraints_log2, ...)) for
`--seconds`, then drained; every event goes to <out-dir>/<name>.jsonl (a RecordingWriter, so
`c2tui summary` / `replay` read it) and one line per run is printed from the fold's summary:
steady throughput, compute-held share and NVML utilisation of the steady window, fallbacks,
proofs verified / failed / unchecked. Rows also go to <out-dir>/native_<log2>.json as they are made.

Budgets: `card` = the device's whole memory; `tight` = 2.5 x one partition's pre-stage bytes
(d_a + d_bc at the proved size: 96 B x 2^log2), which holds two partitions' pre-stages but not
three. The per-partition peak measured from the Alloc events is printed beside it.
`--deadline` (epoch seconds): a run that would not finish before it is skipped, and said so.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover.config import load_config  # noqa: E402
from prover.device.profiles import get_profile  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402

MODES = {  # run name -> knobs (the lock disciplines of prover/disciplines)
    "single": {"lock_mode": "single", "mem_sync": "stream"},
    "narrow": {"lock_mode": "narrow", "mem_sync": "stream"},
    "device": {"lock_mode": "two-lock", "mem_sync": "device"},
    "stream": {"lock_mode": "two-lock", "mem_sync": "stream"},
    "reserved": {"lock_mode": "reserved", "mem_sync": "stream"},
    # with b_g2 on the CPU: single is then close to where Curio's cuzk ended
    "single_cpu": {"lock_mode": "single", "mem_sync": "stream", "b_g2": "cpu"},
    "narrow_cpu": {"lock_mode": "narrow", "mem_sync": "stream", "b_g2": "cpu"},
    # two-lock + stream with b_g2 off the compute lock (12 of ~68 ms of it at 2^22 on the H200)
    "stream_cpu": {"lock_mode": "two-lock", "mem_sync": "stream", "b_g2": "cpu"},
}
# "<mode>_pageable": the same with settings.pinned_host off (uploads from pageable memory), the
# A/B for page-locked host buffers in the same process
for _m in list(MODES):
    MODES[f"{_m}_pageable"] = {**MODES[_m], "kernels": {"pinned_host": False}}


class MemoPhases:
    """prover.groth16.phases with make_circuit / load_or_setup memoized: every Engine of this
    process proves the same circuit with the same keys, built once (the engine takes `phases=`)."""

    def __init__(self) -> None:
        import prover.groth16.phases as P

        self._P = P
        self._circuits: dict[tuple[int, int], Any] = {}
        self._keys: dict[int, Any] = {}
        self.setup_s: dict[str, float] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._P, name)

    def holds_circuit(self, log2: int, seed: int) -> bool:
        """Whether this circuit was made before (the engine's start-up says so: its seconds are
        not in it)."""
        return (log2, seed) in self._circuits

    def make_circuit(self, log2: int, seed: int) -> Any:
        if (log2, seed) not in self._circuits:
            t0 = time.perf_counter()
            self._circuits[(log2, seed)] = self._P.make_circuit(log2, seed)
            self.setup_s["circuit"] = time.perf_counter() - t0
        return self._circuits[(log2, seed)]

    def load_or_setup(self, circuit: Any, seed: int, cache_dir: Any = None, **kw: Any) -> Any:
        # a default (random, OS-entropy) setup, made once per process and kept for every run
        if id(circuit) not in self._keys:
            t0 = time.perf_counter()
            self._keys[id(circuit)] = self._P.load_or_setup(circuit, seed, cache_dir, **kw)
            self.setup_s["keys"] = time.perf_counter() - t0
        return self._keys[id(circuit)]


class ListSink:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, e: Any) -> None:
        self.events.append(e)


def partition_peak(events: list[Any]) -> int:
    """Largest bytes one partition had allocated at once on a device (from Alloc/Free events)."""
    live: dict[str, int] = {}
    peak = 0
    for e in events:
        if e.kind == "alloc" and e.part:
            live[e.part] = live.get(e.part, 0) + e.bytes
            peak = max(peak, live[e.part])
        elif e.kind == "free" and e.part:
            live[e.part] = live.get(e.part, 0) - e.bytes
    return peak


def host_vs_gpu(sm: Any) -> tuple[float, float]:
    """(host seconds per partition, GPU-section seconds per partition) from the phase means."""
    ph = sm.phases

    def mean(k: str) -> float:
        return ph[k].mean if k in ph else 0.0

    host = sum(mean(k) for k in ("synthesis", "prep_msm", "assemble", "verify"))
    gpu = sum(mean(k) for k in ("prestage", "ntt_h", "msm"))
    if sm.knobs.get("b_g2") == "gpu":
        gpu += mean("b_g2_msm")
    else:
        host += mean("b_g2_msm")
    return host, gpu


def line(name: str, sm: Any, peak: int) -> str:
    g = sm.gpus
    held = [None if x.steady_held_share is None else round(x.steady_held_share, 3) for x in g]
    util = [None if x.steady_util_mean is None else round(x.steady_util_mean, 3) for x in g]
    host, gpu = host_vs_gpu(sm)
    return (f"{name}: {sm.steady_throughput_per_min:.1f}/min steady ({sm.partitions_ok} ok, "
            f"{sm.partitions_failed} failed) | compute held {held} util {util} (steady window) | "
            f"fallbacks {sm.fallbacks} ooms {sm.ooms} | proofs verified {sm.proofs_ok} failed {sm.proofs_failed} "
            f"unchecked {sm.proofs_unchecked} | mem hold {[round(x.mem.hold_mean, 3) for x in g]} "
            f"compute hold {[round(x.compute.hold_mean, 3) for x in g]} s | host {host * 1e3:.0f} ms/part vs GPU section {gpu * 1e3:.0f} ms "
            f"| part peak {peak / 2**20:.1f} MiB | b_g2 {sm.knobs.get('b_g2')}")


def cupy_pool_bytes() -> int | None:
    """Bytes CuPy's default pool holds (the key on the device, NTT plans, MSM scratch), which the
    budget does not count: the budget covers the partitions' d_a / d_bc only."""
    try:
        import cupy as cp

        return int(cp.get_default_memory_pool().total_bytes())
    except Exception:
        return None


def pinned_free_blocks() -> int | None:
    """Free blocks in CuPy's pinned pool after a run: bounded when prep copies reuse them."""
    try:
        import cupy as cp

        return int(cp.get_default_pinned_memory_pool().n_free_blocks())
    except Exception:
        return None


def setup_steps() -> dict[str, float]:
    """Seconds per step of this process's key setup (or cache read), rounded."""
    from prover.groth16 import setup

    return {k: round(v, 2) for k, v in setup.step_seconds.items()}


def free_cached_blocks(backend: str) -> None:
    """Give CuPy's cached free blocks back between engines: CuPy's pool reuses a free block
    only on the stream that freed it, and each engine makes new streams, so one process
    running engine after engine would otherwise hold every run's key copies (13 GiB a run at
    2^22, ~30 GiB at 2^24). The pinned pool is kept: its blocks are not tied to a stream, and
    the next engine's workers take their page-locked a, b, c back from it (at 2^24, 18 GiB
    that took the first partition ~20 s to pin)."""
    if backend != "cuda":
        return
    import cupy as cp

    for d in range(cp.cuda.runtime.getDeviceCount()):
        with cp.cuda.Device(d):
            cp.get_default_memory_pool().free_all_blocks()


def device_total(backend: str, gpu: int = 0) -> int:
    if backend == "cuda":
        import cupy as cp

        with cp.cuda.Device(gpu):
            return int(cp.cuda.runtime.memGetInfo()[1])
    return 141 * 1024**3  # sim: an H200's memory, so "card" means the same figure


def wait_first(eng: Any, sink: ListSink, t0: float, first_timeout: float) -> float:
    """Wait for the first finished partition; returns the seconds since t0."""
    while not eng.finished and not any(e.kind == "partition_done" for e in sink.events[-200:]):
        if time.monotonic() - t0 > first_timeout:
            break
        time.sleep(0.2)
    return time.monotonic() - t0


def run_steady(eng: Any, sink: ListSink, t0: float, seconds: float, first_timeout: float, drain_s: float) -> float:
    """Wait for the first finished partition (returns the seconds since t0), run `seconds`
    more, then drain and wait for the end."""
    first = wait_first(eng, sink, t0, first_timeout)
    eng.wait(seconds)
    eng.drain(timeout=drain_s)
    eng.wait(drain_s / 2)
    return first


def run_one(name: str, base: dict[str, Any], phases: MemoPhases, out_dir: Path, seconds: float,
            rows: list[dict[str, Any]], json_path: Path, gzip_recording: bool = False) -> None:
    cfg = load_config(None, **base)
    sink = ListSink()
    writer = RecordingWriter(out_dir / f"{name}.jsonl", RecordingHeader(argv=sys.argv, config=cfg.public_dict(),
                                                                        note=f"bench_native {name}"))
    eng = Engine(cfg, [sink, writer], phases=phases)
    t0 = time.monotonic()
    eng.start()
    # the run's clock starts at start(); setup/warm-up happen inside it, so count from the first partition
    first = run_steady(eng, sink, t0, seconds, first_timeout=900, drain_s=60)
    writer.close()
    sm = summarize(fold(sink.events))
    peak = partition_peak(sink.events)
    scratch = cupy_pool_bytes() if cfg.backend == "cuda" else None
    pinned = pinned_free_blocks() if cfg.backend == "cuda" else None
    extra = "" if scratch is None else (f" | CuPy default pool {scratch / 2**30:.2f} GiB (keys, NTT plans, MSM scratch: "
                                        f"outside the budget) | pinned pool free blocks {pinned}")
    print(line(name, sm, peak) + f" | start-up {first:.1f}s" + extra, flush=True)
    host, gpu = host_vs_gpu(sm)
    rows.append({"name": name, "config": cfg.public_dict(), "summary": sm.model_dump(mode="json"),
                 "partition_peak_bytes": peak, "host_s_per_partition": host, "gpu_section_s": gpu,
                 "startup_s": first, "setup_s": dict(phases.setup_s), "cupy_default_pool_bytes": scratch,
                 "pinned_pool_free_blocks": pinned if cfg.backend == "cuda" else None,
                 "setup_steps_s": setup_steps()})
    json_path.write_text(json.dumps(rows, indent=1))
    for e in sink.events:
        if e.kind == "note" and e.level in ("warn", "error"):
            print(f"  note [{e.level}] {e.text[:300]}", flush=True)
    if gzip_recording:
        gzip_file(out_dir / f"{name}.jsonl")


def gzip_file(path: Path) -> Path:
    """path -> path.gz (what c2tui replay / summary read as is), the plain file removed."""
    import gzip
    import shutil

    gz = path.with_name(path.name + ".gz")
    with open(path, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()
    return gz


def run_plan(plan: list[tuple[str, dict[str, Any]]], phases: MemoPhases, out_dir: Path, seconds: float,
             json_path: Path, deadline: float | None, gzip_recording: bool = False,
             after_run: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run the plan's engines back to back (one circuit and key: MemoPhases); a run that would
    end past `deadline` (epoch s) is skipped and said so. Rows go to json_path as made."""
    rows: list[dict[str, Any]] = []
    for name, cfg in plan:
        if deadline is not None and rows:
            # the circuit and key are made once (MemoPhases): only the first run's start-up holds them
            startup = max(5.0, rows[-1]["startup_s"] - sum(rows[-1]["setup_s"].values())) if len(rows) == 1 \
                else rows[-1]["startup_s"]
            per_run = startup + seconds + 15
            if time.time() + per_run > deadline:
                print(f"{name}: skipped, {deadline - time.time():.0f}s left < ~{per_run:.0f}s a run", flush=True)
                continue
        run_one(name, cfg, phases, out_dir, seconds, rows, json_path, gzip_recording)
        gc.collect()  # the last engine's device copies of the key go before the next run
        free_cached_blocks(cfg["backend"])
        if after_run is not None:
            after_run(rows[-1])
        if len(rows) == 1:
            host, gpu = rows[0]["host_s_per_partition"], rows[0]["gpu_section_s"]
            workers = cfg["workers_per_gpu"]
            need = math.ceil(host / gpu) + 1 if gpu > 0 else workers
            print(f"  workers: host {host * 1e3:.0f} ms per partition on one worker vs GPU section {gpu * 1e3:.0f} ms "
                  f"-> ~{need} workers keep one GPU fed ({workers} used, {os.cpu_count()} CPUs); setup {phases.setup_s}, "
                  f"its steps {setup_steps()}",
                  flush=True)
    return rows


def tight_budget(log2: int) -> int:
    """Two partitions' pre-stages fit, three do not: 2.5 x one (d_a + d_bc at 2^log2)."""
    return int(2.5 * get_profile("native").partition_bytes(log2))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2", type=int, default=22)
    ap.add_argument("--seconds", type=float, default=25.0, help="each run's length before draining")
    ap.add_argument("--workers", type=int, default=None, help="workers per GPU (default: nproc/2, 2..16)")
    ap.add_argument("--runs", default="single,device,stream", help=f"of {', '.join(MODES)}")
    ap.add_argument("--budgets", default="card,tight", help="card, tight")
    ap.add_argument("--two-gpu", default="auto", choices=("auto", "on", "off"), help="a 2-GPU stream run on the card")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=None, help="epoch seconds; runs that would end later are skipped")
    ap.add_argument("--out-dir", type=Path, default=Path("."))
    ap.add_argument("--cache-dir", type=Path, default=ROOT / ".cache" / "keys",
                    help="proving-key cache (seeded setup: a rerun on the same machine loads it)")
    a = ap.parse_args(argv)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    ncpu = os.cpu_count() or 2
    workers = a.workers or max(2, min(16, ncpu // 2))
    part = get_profile("native").partition_bytes(a.log2)
    tight = tight_budget(a.log2)
    total = device_total(a.backend)
    print(f"2^{a.log2} native, backend {a.backend}, {ncpu} CPUs, {workers} workers/GPU; per-partition pre-stage "
          f"{part / 2**20:.1f} MiB (d_a 32 B + d_bc 64 B x 2^{a.log2}); tight budget 2.5 x that = {tight / 2**20:.1f} MiB "
          f"(two pre-stages fit, three do not); card {total >> 20} MiB", flush=True)
    phases = MemoPhases()
    base = {"backend": a.backend, "profile": "native", "constraints_log2": a.log2, "modelled_log2": a.log2,
            "workers_per_gpu": workers, "seed": a.seed, "verify_share": 1.0, "time_scale": 1.0, "b_g2": "auto",
            "cache_dir": str(a.cache_dir)}
    plan: list[tuple[str, dict[str, Any]]] = []
    for budget in a.budgets.split(","):
        for mode in a.runs.split(","):
            b = total if budget == "card" else tight
            if budget == "tight" and mode.endswith("_pageable"):
                continue
            plan.append((f"n{a.log2}_{mode}_{budget}", {**base, **MODES[mode], "vram_budget": b}))
    ngpu = 1
    if a.backend == "cuda":
        import cupy as cp

        ngpu = cp.cuda.runtime.getDeviceCount()
    if a.two_gpu == "on" or (a.two_gpu == "auto" and ngpu >= 2):
        plan.append((f"n{a.log2}_stream_card_2gpu", {**base, **MODES["stream"], "vram_budget": total, "gpus": 2}))
    run_plan(plan, phases, a.out_dir, a.seconds, a.out_dir / f"native_{a.log2}.json", a.deadline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
