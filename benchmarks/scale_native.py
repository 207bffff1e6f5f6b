"""Issue 37, the seed's own size natively, in ONE device call: set-up at scale, then native runs.

    python3 benchmarks/scale_native.py --out-dir $OUT/scale [--part setup,card|seed|all]
        [--sizes 24,26,27] [--budget-s 540] [--seconds 40] [--workers 3] [--card-workers 4]

Everything lands in --out-dir as it is made: scale.json (every figure, rewritten after each
step), <run>.jsonl.gz recordings (c2tui summary / replay read them), log lines on stdout, and a
short table last. A step that fails is recorded with its error and the others still run; a step
that would not fit (free host or device memory, or the time left before --budget-s) is skipped
with the measured reason.

Parts (comma separated):
  setup   kernels compiled; the device set-up checked at 2^14 (the same key bytes as the host
          set-up for one seeded toxic waste, a resident key's proof verified and byte-equal);
          then per --sizes: the circuit built and a real random set-up on the GPU (key resident
          on the device, no cache written), timed per step, and one real proof with its GPU
          phases timed one primitive at a time and verified
  card    at the largest size that set up: two-lock + stream, the card's room as the budget
          (scale_parts.card_budget: free after the set-up less the H MSM's 20 GiB scratch and a
          4 GiB margin; at 2^27 on the H200 59.0 - 24 = 35 GiB, which holds the matrices (4.44)
          and two partitions' plans of 12.19 GiB, abc auto = gpu with z's upload form: 28.8 GiB,
          not three; with z whole, 15.92 GiB a plan, it held one)
  seed    the seed's scenario at the largest size: a 24 GiB budget, 3 workers; two-lock + device,
          two-lock + stream, narrow, reserved (each with its fallbacks, device-sync waits and
          verified rate)
`seed` alone sets up only the largest size (no proof timing): a second call of its own.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path)
import scale_parts as SP  # noqa: E402

GIB = SP.GIB
SEED_BUDGET = 24 * GIB
DISCIPLINES = ("device", "stream", "narrow", "reserved")  # bench_native.MODES names
BACKEND = ["cuda"]  # the runs' backend: sim only for a dry run of this script on the CPU emulator
RUN_OVERHEAD_S = 70.0  # an engine's start, its first partition at 2^27 and the drain, beyond --seconds


class Doc:
    """scale.json, rewritten whole after every change."""

    def __init__(self, path: Path, **head: Any) -> None:
        self.path, self.doc = path, {**head, "steps": {}, "skipped": [], "errors": []}

    def put(self, key: str, value: Any) -> None:
        self.doc["steps"][key] = value
        self.save()

    def skip(self, what: str, why: str) -> None:
        print(f"SKIP {what}: {why}", flush=True)
        self.doc["skipped"].append({"what": what, "why": why})
        self.save()

    def error(self, what: str, exc: BaseException) -> None:
        print(f"ERROR {what}: {type(exc).__name__}: {exc}", flush=True)
        self.doc["errors"].append({"what": what, "error": f"{type(exc).__name__}: {exc}",
                                   "trace": traceback.format_exc(limit=6)})
        self.save()

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, default=str))
        tmp.replace(self.path)


def guarded(doc: Doc, what: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # one step's failure is recorded; the others still report
        doc.error(what, exc)
        return None


def free_device() -> int:
    import cupy as cp

    pool = getattr(cp, "get_default_memory_pool", None)  # (the CPU emulator of the dry runs has none)
    if pool is not None:
        pool().free_all_blocks()
    return int(cp.cuda.runtime.memGetInfo()[0])


def drop_plans(keep_log2: int | None = None) -> None:
    """The NTT plans (twiddles, 64 B a row) of other sizes off the device."""
    from prover.kernels import ntt

    for key in [k for k in ntt._plans if keep_log2 is None or k[1] != keep_log2]:
        del ntt._plans[key]


def check_small(doc: Doc, ks: Any, L: int = 14) -> None:
    """2^L (14): the device set-up gives the host set-up's key bytes (one seeded toxic waste), and
    a resident key's proof verifies with the bytes of the host key's proof."""
    from prover.groth16 import phases as P
    from prover.groth16 import setup as S
    from prover.settings import KernelSettings

    S.DEVICE_SETUP_MIN = min(S.DEVICE_SETUP_MIN, 1 << L)
    circuit = P.make_circuit(L, 7)
    t0 = time.perf_counter()
    pk_d, vk_d = S.setup(circuit, insecure_seed=7, kernels=ks.model_copy(update={"key_resident": "host"}))
    t_dev = time.perf_counter() - t0
    t0 = time.perf_counter()
    pk_h, vk_h = S.setup(circuit, insecure_seed=7, kernels=KernelSettings(setup_gpu=False))
    t_host = time.perf_counter() - t0
    import numpy as np

    same = all(np.array_equal(pk_d.arrays()[k], v) for k, v in pk_h.arrays().items()) and \
        all(np.array_equal(vk_d.arrays()[k], v) for k, v in vk_h.arrays().items())
    pk_r, vk_r = S.setup(circuit, insecure_seed=7, kernels=ks.model_copy(update={"key_resident": "device"}))
    timed = SP.prove_and_time(P, circuit, pk_r, vk_r, ks, reps=1)
    r, s = P.seeded_randomisers(7, 1)
    doc.put(f"check_2^{L}", {"device_setup_s": round(t_dev, 2), "host_setup_s": round(t_host, 2),
                           "same_key_bytes": same, "resident": pk_r.resident, "proof_verified": timed["verified"],
                           "host_key_proof_verified": bool(P.verify(vk_h, P.synthesize(circuit, 1).public_ints(),
                                                                    P.prove(circuit, pk_h, 1, r, s)))})
    print(f"check 2^{L}: device set-up {t_dev:.1f}s = host set-up {t_host:.1f}s bytes: {same}; resident key's proof "
          f"verified: {timed['verified']}", flush=True)
    if not (same and timed["verified"]):
        raise RuntimeError("the device set-up is not the host set-up's key, or its proof did not verify")


def setup_size(doc: Doc, L: int, ks: Any, deadline: float, time_proof: bool) -> tuple[Any, Any, Any] | None:
    """Build 2^L's circuit and set its key up on the GPU (random toxic waste, resident), timed
    per step; then (time_proof) one real proof, phases timed, verified. None when skipped."""
    from prover.groth16 import phases as P
    from prover.groth16 import setup as S

    need = SP.needs(L)
    m, free = SP.meminfo(), free_device()
    row: dict[str, Any] = {"needs_gib": {k: round(v, 1) for k, v in need.items()}, "device_free_gib": round(free / GIB, 1),
                           "host_available_gib": round(m.get("MemAvailable", 0) / GIB, 1)}
    if free < need["device_setup"] * GIB:
        doc.skip(f"set-up 2^{L}", f"device free {free / GIB:.1f} GiB < {need['device_setup']:.1f} GiB the set-up needs")
        return None
    if m.get("MemAvailable", 1 << 62) < (need["host_circuit"] + need["host_proof"]) * GIB:
        doc.skip(f"set-up 2^{L}", f"host available {m['MemAvailable'] / GIB:.1f} GiB < "
                 f"{need['host_circuit'] + need['host_proof']:.1f} GiB")
        return None
    est = 20 + 2.5 * (1 << max(0, L - 24))  # seconds, rough: 2^24 ~20 s, x2 a size
    if time.time() + est > deadline:
        doc.skip(f"set-up 2^{L}", f"{deadline - time.time():.0f}s left < ~{est:.0f}s")
        return None
    t0 = time.perf_counter()
    circuit = P.make_circuit(L, 1)
    row["circuit_s"] = round(time.perf_counter() - t0, 2)
    row["circuit_gib"] = round(circuit.nbytes / GIB, 2)
    row["num_vars"] = circuit.num_vars
    before = dict(S.step_seconds)
    t0 = time.perf_counter()
    pk, vk = S.setup(circuit, kernels=ks)  # a real random set-up: toxic waste from the OS, dropped
    row["setup_s"] = round(time.perf_counter() - t0, 2)
    row["steps_s"] = {k: round(v - before.get(k, 0.0), 2) for k, v in S.step_seconds.items() if v != before.get(k, 0.0)}
    row["key_device_gib"] = round(pk.device_bytes / GIB, 2)
    row["key_host_gib"] = round(pk.nbytes / GIB, 3)
    row["device_free_after_gib"] = round(free_device() / GIB, 1)
    row["rss_gib"] = round(SP.rss() / GIB, 1)
    doc.put(f"setup_2^{L}", row)
    print(f"2^{L}: circuit {row['circuit_s']}s ({row['circuit_gib']} GiB), set-up {row['setup_s']}s {row['steps_s']}; "
          f"key {row['key_device_gib']} GiB on the device, {row['key_host_gib']} GiB host", flush=True)
    if time_proof and L <= 24:  # the other way, measured: the key brought to the host, then uploaded again
        row["host_key"] = guarded(doc, f"host key 2^{L}", lambda: SP.host_key_round_trip(pk, ks))
        doc.put(f"setup_2^{L}", row)
    if time_proof:
        proof = guarded(doc, f"proof 2^{L}", lambda: SP.prove_and_time(P, circuit, pk, vk, ks))
        if proof is not None:
            row["proof"] = proof
            doc.put(f"setup_2^{L}", row)
            print(f"2^{L} proof: {proof}", flush=True)
    return circuit, pk, vk


def run_engines(doc: Doc, plan: list[tuple[str, dict[str, Any]]], keys: tuple[Any, Any, Any], out: Path,
                seconds: float, deadline: float, peaks: SP.Peaks) -> None:
    """The plan's engines back to back over the one circuit and resident key (bench_native's
    MemoPhases), each recorded; a run that would end past the deadline is skipped, said so."""
    import bench_native as BN

    circuit, pk, vk = keys
    phases = BN.MemoPhases()
    phases._circuits[(circuit.constraints_log2, 1)] = circuit
    phases._keys[id(circuit)] = (pk, vk)
    for i, (name, cfg) in enumerate(plan):
        left = deadline - time.time()
        runs_left = len(plan) - i
        secs = min(seconds, max(10.0, left / runs_left - RUN_OVERHEAD_S))
        if left < secs + RUN_OVERHEAD_S:
            doc.skip(name, f"{left:.0f}s left < ~{secs + RUN_OVERHEAD_S:.0f}s a run")
            continue
        peaks.mark(name)
        guarded(doc, name, lambda: _one_run(doc, BN, name, cfg, phases, out, secs, deadline))
        gc.collect()
        free_device()  # CuPy's cached blocks of the last engine back (bench_native.free_cached_blocks)


def _one_run(doc: Doc, BN: Any, name: str, base: dict[str, Any], phases: Any, out: Path, seconds: float,
             deadline: float) -> None:
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.record import RecordingHeader, RecordingWriter
    from prover.fold.apply import fold
    from prover.fold.summary import summarize

    cfg = load_config(None, **base)
    sink = BN.ListSink()
    path = out / f"{name}.jsonl"
    writer = RecordingWriter(path, RecordingHeader(argv=sys.argv, config=cfg.public_dict(), note=f"scale_native {name}"))
    eng = Engine(cfg, [sink, writer], phases=phases)
    t0 = time.monotonic()
    eng.start()
    first = BN.wait_first(eng, sink, t0, max(30.0, deadline - time.time() - seconds - 20))
    eng.wait(seconds)
    eng.drain(timeout=min(60.0, max(5.0, deadline - time.time() - 5)))  # then stopped: in-flight work abandoned
    ended = eng.wait(60)  # the next engine must not start beside this one
    writer.close()
    sm = summarize(fold(sink.events))
    host, gpu = BN.host_vs_gpu(sm)
    notes = [f"[{e.level}] {e.text[:300]}" for e in sink.events if e.kind == "note" and e.level in ("warn", "error")]
    failed = [n for n in notes if n.startswith("[error] engine failed")]
    row = {"config": cfg.public_dict(), "summary": sm.model_dump(mode="json"), "startup_s": round(first, 1),
           "seconds": seconds, "partition_peak_bytes": BN.partition_peak(sink.events),
           "host_s_per_partition": host, "gpu_section_s": gpu, "notes": notes[:20], "ended": ended,
           "phases_mean_s": {k: round(v.mean, 4) for k, v in sm.phases.items()},
           "engine_error": failed[0] if failed else None}
    doc.put(f"run_{name}", row)
    # `startup_s` (the key kept for the results already written) is the engine's start to its first
    # finished partition; the engine's own start-up (summary `startup`) excludes the circuit and the
    # key, made before the runs in this process (it says "held by this process")
    print(BN.line(name, sm, row["partition_peak_bytes"]) + f" | first partition done at {first:.1f}s", flush=True)
    for n in notes[:8]:
        print("  " + n, flush=True)
    BN.gzip_file(path)


def plans(parts: set[str], L: int, workers: int, card_workers: int, card_budget: int) -> list[tuple[str, dict[str, Any]]]:
    import bench_native as BN

    base = {"backend": BACKEND[0], "profile": "native", "constraints_log2": L, "modelled_log2": L, "seed": 1,
            "verify_share": 1.0, "time_scale": 1.0, "b_g2": "auto",
            "class_log2_offset": {"winning": 0, "window": 0},  # one circuit and key (no 2^25 / 2^23 ones)
            "kernels": {"key_resident": "device", "key_cache_write": False}}
    out = []
    if "card" in parts:
        out.append((f"n{L}_stream_card", {**base, **BN.MODES["stream"], "workers_per_gpu": card_workers,
                                          "vram_budget": card_budget}))
    if "seed" in parts:
        for mode in DISCIPLINES:
            out.append((f"n{L}_{mode}_24g", {**base, **BN.MODES[mode], "workers_per_gpu": workers,
                                            "vram_budget": SEED_BUDGET}))
    return out


def table(doc: Doc) -> None:
    steps = doc.doc["steps"]
    print("\n| what | figures |\n| --- | --- |")
    for key, row in steps.items():
        if key.startswith("setup_2^"):
            p = row.get("proof", {})
            print(f"| {key} | circuit {row.get('circuit_s')}s, set-up {row.get('setup_s')}s {row.get('steps_s')}; "
                  f"key {row.get('key_device_gib')} GiB on the GPU | proof: NTT-H {p.get('ntt_h_s')}s, H MSM "
                  f"{p.get('h_msm_s')}s, batch add {p.get('batch_add_s')}s, tails {p.get('tail_msm_s')}s, b_g2 "
                  f"{p.get('b_g2_s')}s, synthesis {p.get('synthesis_s')}s, prep_msm {p.get('prep_msm_s')}s, "
                  f"verified {p.get('verified')} |")
        elif key.startswith("run_"):
            sm = row["summary"]
            print(f"| {key} | {sm.get('steady_throughput_per_min', 0):.2f}/min steady, ok {sm.get('partitions_ok')}, "
                  f"verified {sm.get('proofs_ok')}, failed {sm.get('proofs_failed')}, fallbacks {sm.get('fallbacks')}, "
                  f"ooms {sm.get('ooms')}" + (f", ENGINE FAILED: {row['engine_error'][:120]}" if row.get("engine_error") else "")
                  + " |")
        else:
            print(f"| {key} | {json.dumps(row)[:200]} |")
    for s in doc.doc["skipped"]:
        print(f"| skipped {s['what']} | {s['why']} |")
    for e in doc.doc["errors"]:
        print(f"| error {e['what']} | {e['error'][:200]} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--part", default="setup,card", help="setup, card, seed, all (comma separated)")
    ap.add_argument("--sizes", default="24,26,27")
    ap.add_argument("--budget-s", type=float, default=540.0, help="wall seconds for the whole call")
    ap.add_argument("--seconds", type=float, default=40.0, help="each run's steady length at most")
    ap.add_argument("--workers", type=int, default=3, help="workers in the seed's scenario (24 GiB)")
    ap.add_argument("--card-workers", type=int, default=4)
    ap.add_argument("--check-log2", type=int, default=14, help="the size of the device-vs-host set-up check")
    ap.add_argument("--runs-backend", default="cuda", choices=("cuda", "sim"), help="sim: a dry run of the plumbing")
    a = ap.parse_args(argv)
    BACKEND[0] = a.runs_backend
    t_start = time.time()
    deadline = t_start + a.budget_s
    parts = {"setup", "card", "seed"} if a.part == "all" else set(a.part.split(","))
    a.out_dir.mkdir(parents=True, exist_ok=True)
    doc = Doc(a.out_dir / "scale.json", machine=harness.machine(gpu=True), argv=sys.argv, parts=sorted(parts),
              what="issue 37: native set-up and runs at scale (real random set-up, proofs verified by py_arkworks)")
    peaks = SP.Peaks()
    from prover.field import blocks
    from prover.settings import KernelSettings

    ks = KernelSettings.from_env(key_resident="device", key_cache_write=False)
    blocks.configure(ks.fr_thread_count())
    doc.put("meminfo_gib", {k: round(v / GIB, 1) for k, v in SP.meminfo().items()})
    peaks.mark("compile")
    doc.put("compile_s", guarded(doc, "compile", lambda: SP.compile_kernels(ks)))
    sizes = sorted(int(x) for x in a.sizes.split(","))
    if "setup" in parts:
        peaks.mark(f"check_2^{a.check_log2}")
        guarded(doc, f"check 2^{a.check_log2}", lambda: check_small(doc, ks, a.check_log2))
    else:
        sizes = sizes[-1:]  # runs only: the largest size's key, no proof timing
    keys = None
    for L in sizes:
        if keys is not None:  # the smaller key and its plans off the device first
            keys = None
            gc.collect()
            drop_plans()
            free_device()
        peaks.mark(f"setup_2^{L}")
        got = guarded(doc, f"set-up 2^{L}", lambda L=L: setup_size(doc, L, ks, deadline, "setup" in parts))
        keys = got if got is not None else keys
        doc.put("peaks_gib", peaks.peaks)
    if keys is None:
        doc.skip("runs", "no size was set up")
    elif parts & {"card", "seed"}:
        L = keys[0].constraints_log2
        drop_plans(L)
        # the card's room for pre-stages: what is free beside the resident key and the NTT plan,
        # less the H MSM's scratch (CuPy's pool, outside the budget) and a margin
        free = free_device()
        card = SP.card_budget(free, L)
        room = SP.room(keys[0], card, "gpu" if BACKEND[0] == "cuda" else "host")  # abc auto on CUDA: gpu
        doc.put("card_budget_gib", {"budget": card / GIB, "device_free_gib": round(free / GIB, 1),
                                    "msm_scratch_gib": round(SP.needs(L)["msm_scratch"], 1),
                                    "margin_gib": SP.MARGIN_GIB, "room": room})
        print(f"card budget {card / GIB:.0f} GiB: plan {room['plan_gib']} GiB a partition beside "
              f"{room['resident_gib']} GiB resident: {room['plans_that_fit']} plans fit", flush=True)
        if "card" in parts and not room["plans_that_fit"]:
            doc.skip(f"n{L}_stream_card", f"{card / GIB:.0f} GiB of room beside the key and the MSM scratch < one "
                     f"partition's plan ({room['plan_gib']} GiB) beside {room['resident_gib']} GiB of matrices")
            parts.discard("card")
        run_engines(doc, plans(parts, L, a.workers, a.card_workers, card), keys, a.out_dir, a.seconds, deadline, peaks)
    doc.put("peaks_gib", peaks.close())
    doc.put("wall_s", round(time.time() - t_start, 1))
    table(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
