r"""Fleet scaling on one machine with two GPUs (issue 15): the same native work on a Ray fleet of
one node (local:1, GPU 0) and of two nodes (local:2, GPU 0 and GPU 1), side by side in one run.

    python3 benchmarks/bench_fleet_native.py [--log2 22] [--seconds 20] [--workers 8]
        [--out-dir DIR] [--deadline EPOCH_S] [--backend cuda|sim] [--nodes 1,2]

Each run: FleetEngine(profile native, constraints_log2 = modelled_log2 = --log2, two-lock +
stream, every proof verified, time_scale 1) over `local:N` (prover/fleet/cluster.py: on cuda
node i pins GPU i), for --seconds after its first verified partition, then drained. Its
events go to <out-dir>/fleet_local<N>.jsonl (a schema-2 fleet recording: `c2tui summary`
reads it); the figures come from the fold's summary: steady verified partitions/min (first to
last verified), per host (its partitions, the GPU it pinned and the PCI bus id CUDA opened
there), proofs verified/failed. <out-dir>/fleet_native.json gets every run and the ratio
local:2 / local:1 (issue 15 asks >= 1.9).

Keys: the proving key is set up once, in a child process before any cluster starts (so the
driver holds no CUDA context), into --cache-dir; every host loads that cached key (the cache's
newest file for the circuit): the cache's file list is checked unchanged after each run.
--deadline (epoch seconds): a run that would not finish in time is skipped, and said so.

The device command (2 x H200; carry .whl and .ray, built by ../shared/tools/gpu-wheels and
benchmarks/ray_for_device.sh):

    D=$(( $(date +%s) + 565 )); mkdir -p /tmp/site && tar -xJf .ray/ray-core.tar.xz -C /tmp/site && \
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl .ray/wheels/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit; \
    export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0; \
    timeout $(( D + 15 - $(date +%s) )) python3 benchmarks/bench_fleet_native.py --log2 22 --seconds 20 \
      --workers 8 --out-dir $OUT/fleet --deadline $D 2>&1 | tee $OUT/bench_fleet_native.log

(Ray writes its session under /tmp/ray and raylet logs there; the object store is 100 MB a
node, from /dev/shm or /tmp. Recordings and fleet_native.json land in $OUT/fleet as they are
made, so a run cut short still brings back what it did.)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from bench_native import ListSink, run_steady  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402
from prover.state import fold  # noqa: E402
from prover.summary import summarize  # noqa: E402

FIRST_PART_TIMEOUT_S = 420.0  # cluster start + hosts' circuit, key load and warm-up


def setup_keys(log2: int, seed: int, cache: Path) -> dict[str, Any]:
    """The proving key for the circuit, in `cache` (set up, or loaded when already there)."""
    import prover.groth16.phases as P

    t0 = time.perf_counter()
    circuit = P.make_circuit(log2, seed)
    t1 = time.perf_counter()
    before = key_files(cache)
    P.load_or_setup(circuit, seed, cache)
    return {"circuit_s": round(t1 - t0, 1), "keys_s": round(time.perf_counter() - t1, 1),
            "set_up": key_files(cache) != before, "files": key_files(cache)}


def setup_in_child(log2: int, seed: int, cache: Path) -> dict[str, Any]:
    """setup_keys in a child process: its CUDA context (the setup may use the GPU) ends with it."""
    out = subprocess.run([sys.executable, __file__, "--setup-only", "--log2", str(log2), "--seed", str(seed),
                          "--cache-dir", str(cache)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"key setup failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def key_files(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.glob("*.npz")) if cache.is_dir() else []


def run_fleet(nodes: int, base: dict[str, Any], out_dir: Path, seconds: float, cache: Path) -> dict[str, Any]:
    from prover.fleet.driver import FleetEngine

    name = f"fleet_local{nodes}"
    cfg = load_config(None, **base)
    keys_before = key_files(cache)
    sink = ListSink()
    writer = RecordingWriter(out_dir / f"{name}.jsonl", RecordingHeader(
        argv=sys.argv, config={**cfg.public_dict(), "cluster": f"local:{nodes}"}, note=f"bench_fleet_native {name}"),
        force=True)
    t0 = time.monotonic()
    eng = FleetEngine(cfg, f"local:{nodes}", sinks=[sink, writer.write])
    eng.start()
    first = run_steady(eng, sink, t0, seconds, first_timeout=FIRST_PART_TIMEOUT_S, drain_s=120)
    writer.close()
    wall = time.monotonic() - t0
    sm = summarize(fold(sink.events))
    hosts = {n: h.info.model_dump() for n, h in eng.hosts.items() if h.info is not None}
    pcis = [h["pci_bus_id"] for h in hosts.values() if h["pci_bus_id"]]
    for e in sink.events:  # each host engine's "circuit ... setup N s" (a key load is seconds, a setup ~70 s at 2^22)
        if e.kind == "note" and e.text.startswith("circuit 2^") and e.host in hosts:
            hosts[e.host]["key_note"] = e.text
    row = {
        "name": name, "nodes": nodes, "cluster": f"local:{nodes}", "wall_s": round(wall, 1),
        "startup_s": round(first, 1), "error": eng.error,
        "label": (f"{'simulated device (sim backend)' if sm.simulated else 'native'}, profile {sm.profile}, "
                  f"proved 2^{sm.proved_log2}, modelled 2^{sm.modelled_log2}, time_scale {sm.time_scale}"),
        "steady_verified_per_min": round(sm.steady_throughput_per_min, 2),
        "partitions_ok": sm.partitions_ok, "partitions_failed": sm.partitions_failed,
        "proofs_verified": sm.proofs_ok, "proofs_failed": sm.proofs_failed, "proofs_unchecked": sm.proofs_unchecked,
        "hosts": [{**h.model_dump(mode="json"), **{k: hosts.get(h.host, {}).get(k) for k in
                                                   ("cuda_device", "pci_bus_id", "pid", "workers_per_gpu", "key_note")}}
                  for h in sm.hosts],
        "gpus": [{"gpu": g.gpu, "steady_held_share": g.steady_held_share, "steady_util_mean": g.steady_util_mean}
                 for g in sm.gpus],
        "distinct_gpus": len(set(pcis)) == len(pcis),
        "keys_loaded_from_cache": key_files(cache) == keys_before,
        "recording": str(out_dir / f"{name}.jsonl"),
    }
    for e in sink.events:
        if e.kind == "note" and e.level in ("warn", "error"):
            print(f"  note [{e.level}] {getattr(e, 'host', None) or ''} {e.text[:300]}", flush=True)
    return row


def line(r: dict[str, Any]) -> str:
    hosts = "; ".join(f"{h['host']}: {h['partitions_done']} done, {h['throughput_per_min']:.1f}/min, "
                      f"CUDA_VISIBLE_DEVICES={h['cuda_device']} pci {h['pci_bus_id']}, "
                      f"{(h['key_note'] or '').rpartition('; ')[2]}" for h in r["hosts"])
    return (f"{r['cluster']}: {r['steady_verified_per_min']:.1f} verified/min steady ({r['label']}) | "
            f"proofs verified {r['proofs_verified']} failed {r['proofs_failed']} unchecked {r['proofs_unchecked']} | "
            f"hosts [{hosts}] | start-up {r['startup_s']}s, wall {r['wall_s']}s | key from cache "
            f"{r['keys_loaded_from_cache']} | distinct GPUs {r['distinct_gpus']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2", type=int, default=22)
    ap.add_argument("--seconds", type=float, default=20.0, help="steady running per run before draining")
    ap.add_argument("--workers", type=int, default=8, help="workers per GPU")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--nodes", default="1,2", help="the runs' node counts, in order")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=None, help="epoch seconds; runs that would end later are skipped")
    ap.add_argument("--out-dir", type=Path, default=Path("."))
    ap.add_argument("--cache-dir", type=Path, default=ROOT / ".cache" / "keys", help="proving-key cache")
    ap.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)  # the child of setup_in_child
    a = ap.parse_args(argv)
    cache = a.cache_dir.resolve()
    if a.setup_only:
        print(json.dumps(setup_keys(a.log2, a.seed, cache)))
        return 0
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback (prover/fleet/cluster.py)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    json_path = a.out_dir / "fleet_native.json"
    res: dict[str, Any] = {"machine": harness.machine(gpu=a.backend == "cuda"), "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                           "argv": sys.argv, "runs": []}
    t0 = time.time()
    setup = setup_in_child(a.log2, a.seed, cache)
    res["key_setup"] = {**setup, "wall_s": round(time.time() - t0, 1), "cache_dir": str(cache)}
    print(f"2^{a.log2} native, backend {a.backend}, {os.cpu_count()} CPUs, {a.workers} workers/GPU; key "
          f"{'set up' if setup['set_up'] else 'loaded'} in {setup['keys_s']}s (circuit {setup['circuit_s']}s) "
          f"into {cache}: {setup['files']}", flush=True)
    base = {"backend": a.backend, "profile": "native", "constraints_log2": a.log2, "modelled_log2": a.log2,
            "workers_per_gpu": a.workers, "seed": a.seed, "verify_share": 1.0, "time_scale": 1.0,
            "lock_mode": "two-lock", "mem_sync": "stream", "cache_dir": str(cache), "gpus": 1}
    guess = 120.0 + a.seconds  # before any run: cluster + hosts' start-up, then drain
    for nodes in [int(x) for x in a.nodes.split(",")]:
        need = (res["runs"][-1]["wall_s"] * 1.2 + 15) if res["runs"] else guess
        if a.deadline is not None and time.time() + need > a.deadline:
            print(f"local:{nodes}: skipped, {a.deadline - time.time():.0f}s left < ~{need:.0f}s a run", flush=True)
            res["runs"].append({"cluster": f"local:{nodes}", "skipped": True})
            continue
        row = run_fleet(nodes, base, a.out_dir, a.seconds, cache)
        res["runs"].append(row)
        print(line(row), flush=True)
        json_path.write_text(json.dumps(res, indent=1) + "\n")
    done = {r["nodes"]: r for r in res["runs"] if not r.get("skipped")}
    if 1 in done and 2 in done and done[1]["steady_verified_per_min"]:
        res["ratio_2_over_1"] = round(done[2]["steady_verified_per_min"] / done[1]["steady_verified_per_min"], 3)
        print(f"local:2 / local:1 = {res['ratio_2_over_1']:.3f} (issue 15 asks >= 1.9) [{done[2]['label']}]", flush=True)
    json_path.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {json_path}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
