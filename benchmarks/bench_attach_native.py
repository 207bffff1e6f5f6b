"""The dashboard attached to a native run, as an operator attaches it (issue 12: at most 3%).

    python3 benchmarks/bench_attach_native.py --backend cuda --log2 22 --seconds 20 --pairs 3 --workers 8 \
        --out $OUT/attach_native.json --deadline $(( $(date +%s) + 540 ))

Here (no GPU):  PYTHONPATH=$PWD python benchmarks/bench_attach_native.py --backend sim --log2 10 --seconds 8 --pairs 2

One process runs the engine (profile native, modelled_log2 = log2, two-lock + stream, verify
every proof, time scale 1; bench_native's MemoPhases builds the circuit and keys once). After an
unmeasured warm-up run (the process's first engine compiles kernels and uploads the key), runs
alternate ABBA for --pairs pairs:
  A  the engine with a RecordingWriter sink (headless `c2tui record`; both sides also keep the
     events in a list, for the fold's summary);
  B  the same plus the attach server on a Unix socket (c2tui.cli.listen.start_listening, as
     `record --listen` wires it) and a separate process running `python -m c2tui attach SOCK`,
     the real dashboard at its default 10 Hz on a 200x60 pty (TERM xterm-256color) whose
     output `cat` drains into a file (the terminal). The client has connected and drawn
     before the engine starts and runs throughout; afterwards `q` detaches it.
Each run lasts --seconds after its first partition, then drains. Throughput: steady
verified/min from the fold's summary (first to last verified partition) and the partitions
done inside the fixed window (first partition .. + --seconds). Per pair B/A; medians. The
client's CPU seconds (/proc) over the run, the bytes it drew, how long after the drain its
screen showed every partition done ("N ok"), and whether the server dropped it (> 50k lines behind).
--out gets the JSON after every run; --deadline (epoch s) stops starting pairs that would end later.
"""
from __future__ import annotations

import argparse
import fcntl
import gc
import json
import os
import platform
import pty
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from bench_native import ListSink, MemoPhases, device_total, free_cached_blocks  # noqa: E402
from c2tui.cli.listen import start_listening  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402

ROWS, COLS = 60, 200
CLIENT = "bench"
LIVE: list[subprocess.Popen] = []  # client processes, killed if the bench stops early (their own session: no ^C)


class Client:
    """`python -m c2tui attach SOCK` on a ROWSxCOLS pty; `cat` (the terminal) drains its screen."""

    def __init__(self, sock: Path, screen: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        # this checkout first, then whatever path this process had (e.g. the wheels' target dir)
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env = dict(os.environ, PYTHONPATH=path, TERM="xterm-256color", COLORTERM="truecolor")
        self.proc = subprocess.Popen([sys.executable, "-m", "c2tui", "attach", str(sock), "--name", CLIENT],
                                     stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, start_new_session=True)
        LIVE.append(self.proc)
        self.screen = screen
        with open(screen, "wb") as out:
            self.cat = subprocess.Popen(["cat"], stdin=master, stdout=out, stderr=subprocess.DEVNULL)
        os.close(slave)
        self.master = master

    def cpu_s(self) -> float:
        """User + system CPU of the client process, all its threads."""
        f = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    def drawn(self) -> int:
        return self.screen.stat().st_size

    def wait_ready(self, server: Any, timeout: float = 90.0) -> None:
        """Connected (the server lists it) and its dashboard drawn (a screenful of bytes), then 1 s."""
        end = time.monotonic() + timeout
        while not (CLIENT in server.clients and self.drawn() > ROWS * COLS):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise SystemExit(f"attach client not ready (exit {self.proc.poll()}): "
                                 f"{self.screen.read_bytes()[-2000:].decode(errors='replace')}")
            time.sleep(0.1)
        time.sleep(1.0)

    def ok_shown(self) -> int:
        """The highest "N ok" drawn so far (the partition table's border: "N ok · M failed")."""
        ok = re.findall(rb"(\d+) ok \xc2\xb7 \d+ failed", self.screen.read_bytes())
        return max((int(n) for n in ok), default=0)

    def catch_up(self, ok: int, timeout: float = 10.0) -> float | None:
        """Seconds until the screen shows `ok` partitions done (None: not within timeout)."""
        t0 = time.monotonic()
        while self.ok_shown() < ok:
            if time.monotonic() - t0 > timeout:
                return None
            time.sleep(0.1)
        return round(time.monotonic() - t0, 2)

    def quit(self) -> int | None:
        os.write(self.master, b"q")  # attached, `q` detaches
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.cat.wait(timeout=30)
        os.close(self.master)
        return self.proc.returncode


def run_once(name: str, base: dict, phases: MemoPhases, tmp: Path, seconds: float, attached: bool) -> dict:
    cfg = load_config(None, **base)
    sink = ListSink()
    header = RecordingHeader(argv=sys.argv, config=cfg.public_dict(), note=f"bench_attach_native {name}")
    writer = RecordingWriter(tmp / "run.jsonl", header, force=True)  # one file reused run after run
    eng = Engine(cfg, [sink, writer.write], phases=phases)
    server = client = None
    if attached:
        server = start_listening(eng, str(tmp / "bench.sock"), None, header.model_dump())
        client = Client(tmp / "bench.sock", tmp / f"{name}.screen")
        client.wait_ready(server)
    cpu0, drawn0, w0 = (client.cpu_s(), client.drawn(), time.monotonic()) if client else (0.0, 0, time.monotonic())
    eng.start()
    seen = 0
    while not eng.finished:  # start-up: the window counts from the first partition
        n = len(sink.events)
        if any(e.kind == "partition_done" for e in sink.events[seen:n]):
            break
        seen = n
        time.sleep(0.1)
    startup = time.monotonic() - w0
    eng.wait(seconds)
    row: dict[str, Any] = {"name": name, "attached": attached, "startup_s": round(startup, 2)}
    if client is not None:
        row.update(client_cpu_s=round(client.cpu_s() - cpu0, 2), client_bytes_drawn=client.drawn() - drawn0)
    eng.drain(timeout=60)
    eng.wait(30)
    writer.close()
    row["wall_s"] = round(time.monotonic() - w0, 1)
    done = [e for e in sink.events if e.kind == "partition_done" and e.ok]
    t1 = done[0].t if done else 0.0
    window = [e for e in done if t1 < e.t <= t1 + seconds]
    sm = summarize(fold(sink.events))
    row.update(steady_per_min=round(sm.steady_throughput_per_min, 2), window_done=len(window),
               partitions_ok=sm.partitions_ok, proofs_ok=sm.proofs_ok, proofs_failed=sm.proofs_failed,
               proofs_unchecked=sm.proofs_unchecked, events=len(sink.events), load_avg_1m=round(os.getloadavg()[0], 2))
    if server is not None and client is not None:
        row.update(events_served=server.total, clients_at_end=server.clients,
                   dropped=[list(d) for d in server.dropped])  # before `q`: any entry here is a drop
        row["client_caught_up_s"] = client.catch_up(sm.partitions_ok)  # after the run: it drew every partition
        row["ok_on_screen"] = client.ok_shown()
        row["client_exit"] = client.quit()
        server.close("bench over")
        client.screen.unlink()
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--log2", type=int, default=22)
    ap.add_argument("--workers", type=int, default=8, help="workers per GPU")
    ap.add_argument("--seconds", type=float, default=20.0, help="each run's window after its first partition")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds of the unmeasured first run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=None, help="epoch seconds: no pair starts that would end later")
    ap.add_argument("--cache-dir", default=None, help="proving-key cache (as bench_native's): a rerun loads it")
    ap.add_argument("--out", type=Path, default=Path("attach_native.json"))
    a = ap.parse_args(argv)
    base = {"backend": a.backend, "profile": "native", "constraints_log2": a.log2, "modelled_log2": a.log2,
            "workers_per_gpu": a.workers, "seed": a.seed, "verify_share": 1.0, "time_scale": 1.0,
            "lock_mode": "two-lock", "mem_sync": "stream", "b_g2": "auto", "vram_budget": device_total(a.backend),
            "cache_dir": a.cache_dir}
    doc: dict[str, Any] = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": harness.machine(gpu=a.backend == "cuda"),
        "argv": sys.argv,
        "config": f"native 2^{a.log2} (proved = modelled, profile native, time scale 1), backend {a.backend}, "
                  f"two-lock + stream, {a.workers} workers, every proof verified; "
                  f"A = RecordingWriter (+ an in-memory list for the fold) only, "
                  f"B = + attach server + `c2tui attach` in its own process on a {COLS}x{ROWS} pty at 10 Hz; "
                  f"ABBA, {a.seconds:g} s window after each run's first partition",
        "runs": [], "pairs": []}

    def save() -> None:
        a.out.write_text(json.dumps(doc, indent=1))

    try:
        return _pairs(a, base, doc, save)
    finally:
        for p in LIVE:
            if p.poll() is None:
                p.kill()


def _pairs(a: argparse.Namespace, base: dict, doc: dict, save: Any) -> int:
    phases = MemoPhases()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        doc["warmup"] = run_once("warmup", base, phases, tmp, a.warmup, False)
        doc["setup_s"] = dict(phases.setup_s)
        save()
        for r in range(a.pairs):
            if a.deadline is not None:  # a run: its wall time so far (setup was in the warm-up), + client start
                need = 2 * (max((x["wall_s"] for x in doc["runs"]), default=a.seconds + 25) + 10)
                if time.time() + need > a.deadline:
                    print(f"pair {r}: not started, {a.deadline - time.time():.0f} s left < ~{need:.0f} s", flush=True)
                    break
            res = {}
            for attached in ((False, True) if r % 2 == 0 else (True, False)):
                gc.collect()  # the last engine's device copies go before the next run
                free_cached_blocks(a.backend)
                res[attached] = run_once(f"p{r}_{'B' if attached else 'A'}", base, phases, tmp, a.seconds, attached)
                doc["runs"].append(res[attached])
                save()
            A, B = res[False], res[True]
            doc["pairs"].append({"pair": r, "steady_ratio": round(B["steady_per_min"] / A["steady_per_min"], 4) if A["steady_per_min"] else None,
                                 "window_ratio": round(B["window_done"] / A["window_done"], 4) if A["window_done"] else None})
            for k in ("steady_ratio", "window_ratio"):
                vals = [p[k] for p in doc["pairs"] if p[k] is not None]
                doc[f"median_{k}"] = round(statistics.median(vals), 4) if vals else None
            doc["client_dropped"] = any(x.get("dropped") for x in doc["runs"])
            save()
            print(json.dumps(doc["pairs"][-1]), flush=True)
    print(json.dumps({k: doc.get(k) for k in ("pairs", "median_steady_ratio", "median_window_ratio", "client_dropped")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
