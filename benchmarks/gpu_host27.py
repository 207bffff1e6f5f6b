"""Issue 41, the seed's own size at the GPU's pace: 2^27 on ONE H200, native, 16 host cores,
the best discipline, host threads split over the partitions, and a/b/c made on the GPU (the R1CS
kernel over the circuit's resident matrices: the host builds the witness alone and uploads z and
its classes, not a 12 GiB a/b/c). WRITTEN BEFORE IT WAS RUN (sessions of 2026-12-07, no device
lent): the next session runs it as one device call of <= 10 minutes.

Command (device: `nvidia-h200`, needs_h200: the 2^27 key alone is 69 GiB, an H100 cannot hold it):

    PYTHONUNBUFFERED=1 python3 benchmarks/gpu_host27.py --out-dir $OUT/h27 [--arms gpu,host] \
        [--seconds 200] [--host-seconds 90] [--workers 4] [--host-threads auto] [--mode stream] \
        [--margin-gib 4] [--budget-s 540]
    python3 benchmarks/gpu_host27.py --out-dir /tmp/h --backend sim --log2 12 --seconds 15 --host-seconds 8   # dry run

What it does: the CUDA kernels compiled; the 2^27 circuit built and a real random set-up on the
GPU (key resident on the device, no cache written: benchmarks/scale_native.py's steps); then one
engine run an arm, back to back over that circuit and key, profile native (proved = modelled =
2^27, real kernels, time scale 1), `--mode`'s discipline (bench_native.MODES; default two-lock +
stream), `--workers` workers, `host_threads` as given (auto: 16 cores / the workers), every proof
verified by py_arkworks:
  - arm `gpu` (abc gpu, the new path), for `--seconds` of steady run after its first partition;
  - arm `host` (abc host: the host builds a/b/c and the pre-stage uploads them, as before), for
    `--host-seconds`, where the time left allows (the same machine, after the gpu arm: not
    interleaved, so a comparison, not a ratio with an interval).
The VRAM budget (scale_parts.card_budget, as scale_native.py gives its card run): what the device
has free after the set-up, less the H MSM's scratch (20 GiB, CuPy's pool, outside the budget) and
`--margin-gib` (4: the compute section's other transients, ~2 GiB, and the pools' rounding); the
resident matrices (4.44 GiB at 2^27, abc gpu) are inside it. The arithmetic on the H200 (140.4 GiB;
docs/scale.md): 59.0 GiB free after the set-up with the key resident, so a 35 GiB budget; the gpu
plan is d_a 4 + d_bc 8 + z 0.14 (its field values packed) + z_cls 0.04 (its classes as bits with
ranks) = 12.19 GiB, so 4.44 + 2 x 12.19 = 28.8 GiB: two partitions' plans fit, not three (41.0);
the host plan (12.0 GiB, no matrices) two as well. Two are what lets a pre-stage overlap the compute
holder's kernels; the count is printed before each run, and a warning where it is below two. (With
z uploaded whole, a 15.92 GiB plan, two needed 36.3 GiB: only a 2 GiB margin held them.)

What it writes (under --out-dir, all of it as it is made): scale.json (every figure),
n27_host_<mode>_w<workers>_abc<arm>.jsonl.gz (a recording an arm: copy them to
benchmarks/recordings/h200/ and commit them; `c2tui summary` / `replay` read them), and a table
printed last, an arm a column:
  - verified partitions/min, steady (first to last verified);
  - the compute lock's held share of the steady part and NVML util;
  - OOMs (retried / failed), fallbacks, proofs verified / failed / unchecked;
  - the host work a partition, phase by phase (means, s): synthesis (the witness alone with abc
    gpu), prep_msm, b_g2 on the CPU, assemble, verify; and the GPU section's: prestage (its upload),
    r1cs (the kernel), ntt_h, msm;
  - what set the pace over the run (the fold's pace concept);
  - host RAM a worker as the start-up line said it (witness, abc, prep), the host's peak;
  - the VRAM plan a partition (its Alloc events) and the resident matrices' bytes.
Exit status: 0 when every target of issue 41 is met on the gpu arm (>= 28 verified/min, every proof
verified, 0 OOM, compute held >= 85% of the steady part), 1 when one is missed (each said, as
measured), 2 when the run did not happen.
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
GIB = 1 << 30
HOST_PHASES = ("synthesis", "prep_msm", "b_g2_msm", "assemble", "verify")
GPU_PHASES = ("prestage", "r1cs", "ntt_h", "msm")


def _recording_facts(path: Path) -> dict[str, Any]:
    """From the recording: a worker's host bytes by name (the start-up's accounting), the notes
    that say them, the first partition's VRAM plan and the resident bytes (its Alloc events), the
    phases a partition (b_g2 on the CPU apart from on the GPU), and the pace over the run."""
    from prover.fold.apply import fold
    from prover.record import read_recording

    evs = read_recording(path).events
    worker: dict[str, int] = {}
    plan: dict[str, dict[str, int]] = {}
    resident: dict[str, int] = {}
    for e in evs:
        if e.kind == "host_ram" and e.owner.startswith("g0w0") and e.bytes:
            worker[e.name] = e.bytes
        elif e.kind == "alloc" and e.part is not None:
            plan.setdefault(e.part, {})[e.name] = e.bytes
        elif e.kind == "alloc":
            resident[f"{e.owner} {e.name}"] = e.bytes
    s = fold(evs)
    pace = s.pace.run(0, s.t)
    notes = [e.text for e in evs if e.kind == "note" and e.text.startswith(("host RAM:", "host threads:", "gpu0: VRAM"))]
    notes += [f"matrices: {e.detail}" for e in evs if e.kind == "startup" and e.step == "matrices" and e.state == "end"]
    first = next(iter(plan.values()), {})
    return {"worker_bytes": worker, "startup_notes": notes, "pace": pace.model_dump() if pace else None,
            "pace_sentence": pace.sentence() if pace else None, "vram_plan_bytes": first,
            "vram_plan_same_every_partition": all(p == first for p in plan.values()),
            "resident_bytes": resident, "resident_total_bytes": sum(resident.values())}


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


def _budget(doc: Any, log2: int, backend: str, margin_gib: float) -> int | str:
    """The card's room for the run: free after the set-up, less the H MSM's scratch and a margin."""
    if backend != "cuda":
        return "card"
    free = SN.free_device()
    card = SP.card_budget(free, log2, margin_gib)
    doc.put("card_budget_gib", {"budget": card / GIB, "device_free_gib": round(free / GIB, 1),
                                "msm_scratch_gib": round(SP.needs(log2)["msm_scratch"], 1), "margin_gib": margin_gib})
    return card


def _arm_row(doc: Any, name: str, out_dir: Path) -> dict[str, Any] | None:
    run = doc.doc["steps"].get(f"run_{name}")
    if run is None:
        return None
    facts = SN.guarded(doc, f"recording facts {name}", lambda: _recording_facts(out_dir / f"{name}.jsonl.gz")) or {}
    sm = run["summary"]
    means = run.get("phases_mean_s", {})
    on_host = [p for p in HOST_PHASES if p != "b_g2_msm" or run["config"].get("b_g2") == "cpu"]
    return {"summary": sm, "facts": facts, "host_phases_s": {p: means.get(p) for p in HOST_PHASES},
            "gpu_phases_s": {p: means.get(p) for p in GPU_PHASES},
            "host_work_s": round(sum(means.get(p) or 0.0 for p in on_host), 3)}


def _print_table(rows: dict[str, dict[str, Any]]) -> None:
    arms = list(rows)
    print("\n" + " | ".join(["figure"] + [f"abc {a}" for a in arms]))

    def line(label: str, fn: Any) -> None:
        cells = []
        for a in arms:
            try:
                cells.append(str(fn(rows[a])))
            except Exception:
                cells.append("-")
        print(" | ".join([label] + cells))

    line("verified/min steady", lambda r: f"{r['summary']['steady_throughput_per_min']:.2f}")
    line("compute held (steady)", lambda r: f"{(r['summary']['gpus'][0].get('steady_held_share') or 0):.1%}")
    line("OOMs / fallbacks", lambda r: f"{r['summary']['ooms']} / {r['summary']['fallbacks']}")
    line("proofs ok / failed / unchecked",
         lambda r: f"{r['summary']['proofs_ok']} / {r['summary']['proofs_failed']} / {r['summary']['proofs_unchecked']}")
    for p in HOST_PHASES:  # b_g2_msm: a kernel under compute where b_g2 resolved to gpu (auto on CUDA)
        line(f"host: {p} (s)" if p != "b_g2_msm" else "b_g2_msm (s; on the GPU where b_g2=gpu)",
             lambda r, p=p: r["host_phases_s"][p])
    line("host work a partition (s)", lambda r: r["host_work_s"])
    for p in GPU_PHASES:
        line(f"GPU section: {p} (s)", lambda r, p=p: r["gpu_phases_s"][p])
    line("host RAM a worker (GiB)", lambda r: {k: round(v / GIB, 2) for k, v in r["facts"]["worker_bytes"].items()})
    line("VRAM plan a partition (GiB)", lambda r: {k: round(v / GIB, 2) for k, v in r["facts"]["vram_plan_bytes"].items()})
    line("resident matrices (GiB)", lambda r: round(r["facts"]["resident_total_bytes"] / GIB, 2))
    line("pace over the run", lambda r: r["facts"]["pace_sentence"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--log2", type=int, default=27)
    ap.add_argument("--arms", default="gpu,host", help="abc values, in order: gpu (the new path), host (before)")
    ap.add_argument("--seconds", type=float, default=200.0, help="the gpu arm's steady length")
    ap.add_argument("--host-seconds", type=float, default=90.0, help="the host arm's steady length")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--host-threads", default="auto", help="N or auto (16 cores / the workers)")
    ap.add_argument("--mode", default="stream", help="bench_native.MODES: stream (two-lock + stream), reserved, ...")
    ap.add_argument("--margin-gib", type=float, default=SP.MARGIN_GIB,
                    help="VRAM left free beside the budget and the MSM scratch")
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
                 what="issue 41: 2^27 on one H200, a/b/c on the GPU against on the host (native, every proof verified)")
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
    budget = _budget(doc, a.log2, a.backend, a.margin_gib)
    arms = [x.strip() for x in a.arms.split(",") if x.strip()]
    rows: dict[str, dict[str, Any]] = {}
    for i, abc in enumerate(arms):
        name = f"n{a.log2}_host_{a.mode}_w{a.workers}_abc{abc}"
        room = SP.room(keys[0], budget, abc)
        doc.put(f"room_{abc}", room)
        print(f"abc {abc}: plan {room['plan_gib']} GiB a partition, {room['resident_gib']} GiB resident, budget "
              f"{room['budget_gib']} GiB: {room['plans_that_fit']} partitions' plans fit", flush=True)
        if isinstance(room["plans_that_fit"], int) and room["plans_that_fit"] < 2:
            print(f"WARNING abc {abc}: fewer than two plans fit: no pre-stage can overlap the compute holder "
                  "(a smaller --margin-gib, or less on the device)", flush=True)
        cfg = {"backend": a.backend, "profile": "native", "constraints_log2": a.log2, "modelled_log2": a.log2, "seed": 1,
               "verify_share": 1.0, "time_scale": 1.0, "b_g2": "auto", "class_log2_offset": {"winning": 0, "window": 0},
               "kernels": {"key_resident": "device", "key_cache_write": False}, **BN.MODES[a.mode],
               "workers_per_gpu": a.workers, "host_threads": parse_spec(a.host_threads), "vram_budget": budget,
               "abc": abc}
        seconds = a.seconds if i == 0 else a.host_seconds
        SN.run_engines(doc, [(name, cfg)], keys, a.out_dir, seconds, deadline, peaks)
        row = _arm_row(doc, name, a.out_dir)
        if row is not None:
            rows[abc] = row
    doc.put("peaks_gib", peaks.peaks)
    SN.table(doc)
    first = arms[0] if arms else "gpu"
    if first not in rows:
        return 2
    verdicts = _verdicts(rows[first]["summary"])
    doc.put("issue41", {"arms": {k: {kk: vv for kk, vv in v.items() if kk != "summary"} for k, v in rows.items()},
                        "targets": [{"what": w, "met": ok, "measured": m} for w, ok, m in verdicts],
                        "wall_s": round(time.time() - t0, 1)})
    _print_table(rows)
    print(f"\n2^{a.log2}, {a.mode}, {a.workers} workers, host_threads {a.host_threads} ({a.backend}; "
          f"{'native' if a.log2 == 27 and a.backend == 'cuda' else 'NOT the native 2^27 figure'}):")
    print("phase means (s), by arm:", json.dumps({k: r["summary"]["phases"] and {
        p: round(v["mean"], 4) for p, v in r["summary"]["phases"].items()} for k, r in rows.items()}))
    for what, ok, measured in verdicts:
        print(f"{'MET ' if ok else 'MISSED'}  {what} (abc {first}): {measured}")
    return 0 if all(ok for _, ok, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
