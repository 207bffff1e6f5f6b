"""The prover's rate with 20 cuzk gRPC clients submitting and awaiting against the same run
without them (issue 45: within 5%).

    python benchmarks/bench_cuzk_clients.py [--pairs 3] [--seconds 40] [--out benchmarks/results/cuzk_clients.json]

Each pair runs `c2tui record --grpc unix://... --grpc-own-work --duration S` twice, in
alternating order (with clients first in odd pairs, so the machine's load favours neither):
once alone, once with 20 client threads that each loop SubmitProof (C2, HIGH priority, their
own bytes) + AwaitProof until the run ends. The rate is verified partitions/min in the steady
window of `c2tui summary --json` (the run's own sectors and the clients' jobs together: the
queue is never empty either way, so a server that costs the prover nothing leaves it as is).
It prints and writes each run's rate, each arm's mean, and the ratio with-clients / alone with
a 95% bootstrap interval over the pairs; it also counts jobs submitted, completed and lost
(answered neither COMPLETED nor FAILED/CANCELLED before the run ended).
Profile tiny, 2^10 proved, sim backend (CPU), time scale 0.5: a figure of this machine's CPUs.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from prover.cuzk import proving_pb2 as pb  # noqa: E402
from prover.cuzk.service import Stub  # noqa: E402

RUN = ["--backend", "sim", "--profile", "tiny", "--constraints-log2", "10", "--partitions", "2",
       "--workers-per-gpu", "2", "--time-scale", "0.5", "--insecure-seeded-setup"]


def one_run(tmp: Path, seconds: float, clients: int, cache: Path) -> dict:
    sock, rec = tmp / f"c{clients}.sock", tmp / f"r{clients}-{time.monotonic_ns()}.jsonl"
    cmd = [sys.executable, "-m", "c2tui", "record", "-o", str(rec), *RUN, "--cache-dir", str(cache),
           "--grpc", f"unix://{sock}", "--grpc-own-work", "--duration", str(seconds), "-q"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    counts = {"submitted": 0, "completed": 0, "ended_otherwise": 0, "lost": 0}
    lock = threading.Lock()
    stop = threading.Event()

    def client(i: int) -> None:
        while not sock.exists() and not stop.is_set():
            time.sleep(0.05)
        st = Stub(grpc.insecure_channel(f"unix:{sock}"))
        j = 0
        while not stop.is_set():
            rid = f"bench-{i}-{j}"
            j += 1
            try:
                st.SubmitProof(pb.SubmitProofRequest(request_id=rid, proof_kind=pb.POREP_SEAL_COMMIT,
                                                     vanilla_proof=rid.encode(), priority=pb.HIGH), timeout=10)
            except grpc.RpcError:
                return  # the run is ending
            with lock:
                counts["submitted"] += 1
            try:
                r = st.AwaitProof(pb.AwaitProofRequest(job_id=rid), timeout=seconds + 120)
                key = "completed" if r.status == pb.AwaitProofResponse.COMPLETED else "ended_otherwise"
            except grpc.RpcError:
                key = "lost"
            with lock:
                counts[key] += 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    proc.wait(timeout=seconds + 600)
    stop.set()
    for t in threads:
        t.join(30)
    sm = json.loads(subprocess.run([sys.executable, "-m", "c2tui", "summary", str(rec), "--json"], cwd=ROOT,
                                   capture_output=True, text=True, check=True).stdout)
    rate = sm["steady_throughput_per_min"]
    return {"clients": clients, "rate": rate, "rc": proc.returncode, "jobs": counts}


def ratio_interval(a: list[float], b: list[float], n: int = 5000) -> tuple[float, float, float]:
    rng = random.Random(1)
    point = statistics.mean(a) / statistics.mean(b)
    boots = sorted(statistics.mean(rng.choices(a, k=len(a))) / statistics.mean(rng.choices(b, k=len(b))) for _ in range(n))
    return point, boots[int(0.025 * n)], boots[int(0.975 * n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cuzk_clients.json"))
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "keys"
        for i in range(args.pairs):
            for clients in ((20, 0) if i % 2 == 0 else (0, 20)):
                r = one_run(Path(tmp), args.seconds, clients, cache)
                print(json.dumps(r), flush=True)
                runs.append(r)
    alone = [r["rate"] for r in runs if r["clients"] == 0]
    withc = [r["rate"] for r in runs if r["clients"] == 20]
    point, lo, hi = ratio_interval(withc, alone)
    out = {"date": time.strftime("%Y-%m-%d"), "machine": os.uname().nodename, "command": " ".join(sys.argv),
           "what": "verified partitions/min (steady), sim 2^10 tiny, time scale 0.5; 20 cuzk clients vs none",
           "runs": runs, "alone_mean": statistics.mean(alone), "with_clients_mean": statistics.mean(withc),
           "ratio": point, "ratio_95": [lo, hi],
           "jobs_lost": sum(r["jobs"]["lost"] for r in runs)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"with 20 clients / alone: {point:.3f} [95% {lo:.3f}, {hi:.3f}]; jobs lost {out['jobs_lost']}")


if __name__ == "__main__":
    main()
