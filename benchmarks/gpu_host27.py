"""Issue 41, the seed's own size at the GPU's pace: 2^27 on ONE H200, native, 16 host cores,
the best discipline, host threads split over the partitions. WRITTEN BEFORE IT WAS RUN (session
of 2026-12-07, no device lent): the next session runs it as one device call of <= 10 minutes.

Command (device: `nvidia-h200`, needs_h200: the 2^27 key alone is 69 GiB, an H100 cannot hold it):

    PYTHONUNBUFFERED=1 python3 benchmarks/gpu_host27.py --out-dir $OUT/h27 [--seconds 240] \
        [--workers 4] [--host-threads auto] [--mode stream] [--budget-s 540]
    python3 benchmarks/gpu_host27.py --out-dir /tmp/h --backend sim --log2 12 --seconds 20   # a CPU dry run

What it does: the CUDA kernels compiled; the 2^27 circuit built and a real random set-up on the
GPU (key resident on the device, no cache written: benchmarks/scale_native.py's steps); then ONE
engine run, profile native (proved = modelled = 2^27, real kernels, time scale 1), `--mode`'s
discipline (bench_native.MODES; default two-lock + stream), `--workers` workers, `host_threads`
as given (auto: 16 cores / the workers), the card's room as the VRAM budget, every proof
verified by py_arkworks, for `--seconds` of steady run after the first partition.

What it writes (under --out-dir, all of it as it is made): scale.json (every figure),
n27_host_<mode>_w<workers>.jsonl.gz (the recording: copy it to benchmarks/recordings/h200/ and
commit it; `c2tui summary` / `replay` read it), and a table printed last:
  - verified partitions/min, steady (first to last verified), with its 95% interval;
  - the compute lock's held share of the steady part (GpuSummary.steady_held_share) and NVML util;
  - OOMs (retried / failed), fallbacks, proofs verified / failed / unchecked;
  - what set the pace over the run (the fold's pace concept) and the host phases' means;
  - host RAM a worker as the start-up line said it, and the host's peak.
Exit status: 0 when every target of issue 41 is met (>= 28 verified/min, every proof verified,
0 OOM, compute held >= 85% of the steady part), 1 when one is missed (each said, as measured),
2 when the run did not happen.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path)
import scale_native as SN  # noqa: E402
import scale_parts as SP  # noqa: E402

TARGET_PER_MIN = 28.0
TARGET_HELD = 0.85


def _recording_facts(path: Path) -> dict[str, Any]:
    """From the recording: a worker's host bytes by name (the start-up's accounting), the notes
    that say them, and the pace over the run (the fold's)."""
    from prover.fold.apply import fold
    from prover.record import read_recording

    evs = read_recording(path).events
    worker: dict[str, int] = {}
    for e in evs:
        if e.kind == "host_ram" and e.owner.startswith("g0w0") and e.bytes:
            worker[e.name] = e.bytes
    s = fold(evs)
    pace = s.pace.run(0, s.t)
    notes = [e.text for e in evs if e.kind == "note" and e.text.startswith(("host RAM:", "host threads:"))]
    return {"worker_bytes": worker, "startup_notes": notes, "pace": pace.model_dump() if pace else None,
            "pace_sentence": pace.sentence() if pace else None}


def _verdicts(sm: dict[str, Any]) -> list[tuple[str, bool, str]]:
    g = sm["gpus"][0]
    rate, held = sm["steady_throughput_per_min"], g.get("steady_held_share") or 0.0
    ok_proofs = sm["proofs_failed"] == 0 and sm["proofs_unchecked"] == 0 and sm["proofs_ok"] > 0
    return [("verified/min >= 28", rate >= TARGET_PER_MIN, f"{rate:.2f}/min steady"),
            ("every proof verified", ok_proofs, f"{sm['proofs_ok']} verified, {sm['proofs_failed']} failed, "
                                                f"{sm['proofs_unchecked']} unchecked"),
            ("0 OOM", sm["ooms"] == 0, f"{sm['ooms']} OOMs ({sm.get('ooms_retried', 0)} retried, "
                                       f"{sm.get('ooms_failed', 0)} failed)"),
            ("compute held >= 85% of the steady part", held >= TARGET_HELD, f"{held:.1%} held, "
             f"NVML util {g.get('steady_util_mean')}")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--log2", type=int, default=27)
    ap.add_argument("--seconds", type=float, default=240.0, help="the run's steady length")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--host-threads", default="auto", help="N or auto (16 cores / the workers)")
    ap.add_argument("--mode", default="stream", help="bench_native.MODES: stream (two-lock + stream), reserved, ...")
    ap.add_argument("--budget-s", type=float, default=540.0, help="wall seconds for the whole call")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"), help="sim: a CPU dry run of the plumbing")
    a = ap.parse_args(argv)
    import bench_native as BN
    from prover.field import blocks
    from prover.host.threads import parse_spec
    from prover.settings import KernelSettings

    SN.BACKEND[0] = a.backend
    t0 = time.time()
    deadline = t0 + a.budget_s
    a.out_dir.mkdir(parents=True, exist_ok=True)
    doc = SN.Doc(a.out_dir / "scale.json", machine=harness.machine(gpu=a.backend == "cuda"), argv=sys.argv,
                 what="issue 41: 2^27 on one H200 with host threads (native, every proof verified)")
    ks = KernelSettings.from_env(key_resident="device", key_cache_write=False)
    blocks.configure(ks.fr_thread_count())
    peaks = SP.Peaks()
    if a.backend == "cuda":
        peaks.mark("compile")
        doc.put("compile_s", SN.guarded(doc, "compile", lambda: SP.compile_kernels(ks)))
    peaks.mark(f"setup_2^{a.log2}")
    if a.backend == "cuda":
        keys = SN.guarded(doc, f"set-up 2^{a.log2}", lambda: SN.setup_size(doc, a.log2, ks, deadline, False))
    else:  # the dry run: no CuPy here; the key set up on the host
        from prover.groth16 import phases as P

        SN.free_device = lambda: 0
        circuit = P.make_circuit(a.log2, 1)
        keys = (circuit, *P.load_or_setup(circuit, 1))
    if keys is None:
        print("the 2^27 set-up did not happen: no run (scale.json says why)", flush=True)
        return 2
    name = f"n{a.log2}_host_{a.mode}_w{a.workers}"
    cfg = {"backend": a.backend, "profile": "native", "constraints_log2": a.log2, "modelled_log2": a.log2, "seed": 1,
           "verify_share": 1.0, "time_scale": 1.0, "b_g2": "auto", "class_log2_offset": {"winning": 0, "window": 0},
           "kernels": {"key_resident": "device", "key_cache_write": False}, **BN.MODES[a.mode],
           "workers_per_gpu": a.workers, "host_threads": parse_spec(a.host_threads), "vram_budget": "card"}
    SN.run_engines(doc, [(name, cfg)], keys, a.out_dir, a.seconds, deadline, peaks)
    doc.put("peaks_gib", peaks.peaks)
    run = doc.doc["steps"].get(f"run_{name}")
    if run is None:
        SN.table(doc)
        return 2
    facts = SN.guarded(doc, "recording facts", lambda: _recording_facts(a.out_dir / f"{name}.jsonl.gz")) or {}
    sm = run["summary"]
    verdicts = _verdicts(sm)
    doc.put("issue41", {**facts, "targets": [{"what": w, "met": ok, "measured": m} for w, ok, m in verdicts],
                        "wall_s": round(time.time() - t0, 1)})
    SN.table(doc)
    print(f"\n2^{a.log2}, {a.mode}, {a.workers} workers, host_threads {a.host_threads} ({a.backend}; "
          f"{'native' if a.log2 == 27 and a.backend == 'cuda' else 'NOT the native 2^27 figure'}):")
    print("pace over the run:", facts.get("pace_sentence"))
    print("worker host bytes:", {k: f"{v / 2**30:.2f} GiB" for k, v in facts.get("worker_bytes", {}).items()})
    print("phase means (s):", json.dumps(run.get("phases_mean_s")))
    for what, ok, measured in verdicts:
        print(f"{'MET ' if ok else 'MISSED'}  {what}: {measured}")
    return 0 if all(ok for _, ok, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
