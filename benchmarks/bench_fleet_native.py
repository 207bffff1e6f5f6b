r"""Fleet scaling on one machine with several GPUs (issues 15, 27): the same native work on Ray
fleets of local:N nodes (node i pins GPU i), side by side in one run; then, optionally, the
largest fleet again with the dashboard attached, and a fleet that loses a node mid-run.

    python3 benchmarks/bench_fleet_native.py [--log2 22] [--seconds 20] [--workers 8]
        [--out-dir DIR] [--deadline EPOCH_S] [--backend cuda|sim] [--nodes 1,4,8]
        [--attach N [--attach-seconds 30]] [--kill N [--kill-seconds 16]]

Each run: FleetEngine(profile native, constraints_log2 = modelled_log2 = --log2, two-lock +
stream, every proof verified, time_scale 1) over `local:N` (prover/fleet/cluster.py: on cuda
node i pins GPU i), for --seconds after its first verified partition, then drained. Its
events go to <out-dir>/fleet_local<N>[_attached|_kill].jsonl (a fleet recording: `c2tui
summary` reads it); the figures come from the fold's summary: steady verified partitions/min
(first to last verified), per host (its partitions, the GPU it pinned and the PCI bus id CUDA
opened there), per GPU the compute-held share and NVML utilisation of the steady window,
proofs verified/failed. <out-dir>/fleet_native.json gets every run, the ratios of every
local:N to local:1 (issue 15 asks local:2 >= 1.9x, issue 27 local:4 >= 3.8x, local:8 >= 7.6x)
and that table in Markdown (table_md). What happens during the window (fleet_during.py):
  --attach N  local:N once more, serving `--listen` (c2tui.cli.listen); the real dashboard
              (`c2tui attach`, its own process, a 200x60 pty at 10 Hz) attached for the middle
              third: its cost = that window's rate against the windows before and after it
  --kill N    local:N once more; halfway, a worker node with work pending is removed from the
              cluster; afterwards every partition is checked done exactly once from the events
              (the requeued ones on another host, after the loss)

Keys: the proving key is set up once, in a child process before any cluster starts (so the
driver holds no CUDA context), into --cache-dir; every host loads that cached key (the cache's
newest file for the circuit): the cache's file list is checked unchanged after each run.
--deadline (epoch seconds): a run that would not finish in time is skipped, and said so.

The device command for 4 or 8 H200s (issue 27) is benchmarks/gpu_fleet_scale.sh (the same,
with --nodes 1,4,8 --attach 8 --kill 4). For 2 x H200 (issue 15; carry .whl and .ray, built
by ../shared/tools/gpu-wheels and benchmarks/ray_for_device.sh):

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
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from bench_attach_native import LIVE, Client  # noqa: E402
from bench_native import ListSink, wait_first  # noqa: E402
from c2tui.cli.listen import start_listening  # noqa: E402
from fleet_during import attached, exactly_once, gpu_table, kill_node  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402

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


def run_fleet(nodes: int, base: dict[str, Any], out_dir: Path, seconds: float, cache: Path,
              during: str = "steady") -> dict[str, Any]:
    """One fleet run; `during` its steady window: 'steady' (nothing), 'attached' (the dashboard
    attached for its middle third, fleet_during.attached) or 'kill' (a node removed halfway)."""
    from prover.fleet.driver import FleetEngine

    name = f"fleet_local{nodes}" + {"steady": "", "attached": "_attached", "kill": "_kill"}[during]
    cfg = load_config(None, **base)
    keys_before = key_files(cache)
    sink = ListSink()
    header = RecordingHeader(argv=sys.argv, config={**cfg.public_dict(), "cluster": f"local:{nodes}"},
                             note=f"bench_fleet_native {name}")
    writer = RecordingWriter(out_dir / f"{name}.jsonl", header, force=True)
    t0 = time.monotonic()
    eng = FleetEngine(cfg, f"local:{nodes}", sinks=[sink, writer.write])
    sock = Path(tempfile.mkdtemp(prefix="c2fleet")) / "fleet.sock"
    server = start_listening(eng, str(sock), None, header.model_dump()) if during == "attached" else None
    eng.start()
    first = wait_first(eng, sink, t0, FIRST_PART_TIMEOUT_S)
    extra: dict[str, Any] = {}
    if during == "attached":
        extra["attached"] = attached(eng, sink.events, Client, server, sock, out_dir / f"{name}.screen", seconds)
    elif during == "kill":
        extra["kill"] = kill_node(eng, sink.events, seconds)
    else:
        eng.wait(seconds)
    eng.drain(timeout=120)
    eng.wait(60)
    if server is not None:
        server.close("bench over")
    writer.close()
    wall = time.monotonic() - t0
    sm = summarize(fold(sink.events))
    if during == "kill":
        extra["exactly_once"] = exactly_once(sink.events)
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
        "recording": str(out_dir / f"{name}.jsonl"), **extra,
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
    ap.add_argument("--attach", type=int, default=0, metavar="N",
                    help="then local:N with the dashboard attached in its own process for the middle third")
    ap.add_argument("--attach-seconds", type=float, default=30.0)
    ap.add_argument("--kill", type=int, default=0, metavar="N", help="then local:N with a worker node removed halfway")
    ap.add_argument("--kill-seconds", type=float, default=16.0)
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
    plan = [(int(x), "steady") for x in a.nodes.split(",")]
    plan += [(a.attach, "attached")] if a.attach else []
    plan += [(a.kill, "kill")] if a.kill else []
    for nodes, during in plan:
        seconds = {"steady": a.seconds, "attached": a.attach_seconds, "kill": a.kill_seconds}[during]
        # before any run: cluster + hosts' start-up, then drain; after one, the longest so far
        walls = [r["wall_s"] for r in res["runs"] if not r.get("skipped")]
        need = (max(walls) + seconds - a.seconds) * 1.2 + 15 if walls else 120.0 + seconds
        if a.deadline is not None and time.time() + need > a.deadline:
            print(f"local:{nodes} {during}: skipped, {a.deadline - time.time():.0f}s left < ~{need:.0f}s a run", flush=True)
            res["runs"].append({"cluster": f"local:{nodes}", "nodes": nodes, "during": during, "skipped": True})
            continue
        row = {**run_fleet(nodes, base, a.out_dir, seconds, cache, during), "during": during}
        res["runs"].append(row)
        print(line(row), flush=True)
        for k in ("attached", "kill", "exactly_once"):
            if k in row:
                print(f"  {k}: {json.dumps(row[k])}", flush=True)
        json_path.write_text(json.dumps(res, indent=1) + "\n")
    steady = {r["nodes"]: r for r in res["runs"] if r.get("during") == "steady" and not r.get("skipped")}
    one = steady.get(1, {}).get("steady_verified_per_min")
    res["ratios_to_local1"] = {f"local:{n}": round(r["steady_verified_per_min"] / one, 3)
                               for n, r in steady.items() if one and n != 1}
    for k, v in res["ratios_to_local1"].items():
        want = {"local:2": 1.9, "local:4": 3.8, "local:8": 7.6}.get(k)
        print(f"{k} / local:1 = {v:.3f}" + (f" (issue 27 asks >= {want})" if want else ""), flush=True)
    res["table_md"] = gpu_table([r for r in res["runs"] if r.get("during") in ("steady", None)])
    print("\n".join(res["table_md"]), flush=True)
    json_path.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {json_path}", flush=True)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    finally:
        for proc in LIVE:  # an attach client left by a run cut short
            if proc.poll() is None:
                proc.kill()
