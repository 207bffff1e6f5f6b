"""Peak memory and wall time of the recording readers at the event bound (issue 35): `summary`
of a legal recording of MAX_EVENTS events must stay under 1 GB; `screenshot` (the replay's fold
and its seek checkpoints) must grow linearly with N, flat in its checkpoints.

    python benchmarks/bench_replay_memory.py [--events N] [--gpus G] [--skip-screenshot] [--skip-replay] [--out FILE]

Recordings are made here, not committed (~20 MB gzipped at the bound):
- `legal`: a simulated run's event stream (tests/helpers/tui_synth.py: G GPUs x 3 workers,
  locks, pre-stage, VRAM samples, progress, proofs), written as it is made until N events (a
  run_ended last): every line passes the reader's checks;
- `allocs`: the issue's 100k `alloc` events (one GPU, 16 owners, a buffer name each), whose
  state grows with N (100k live buffers): the case where a deep copy every 2000 events took
  47 s and 1.9 GB to draw.
Each command runs as its own process (`python -m c2tui ...`); its peak RSS is the child's
`ru_maxrss` (os.wait4), its wall time the parent's clock; `replay` (paused at the end) runs in
a pseudo-terminal until drawn and idle, its peak RSS /proc's VmHWM. Simulated streams: the figures are
the readers' and the fold's own costs, no prover runs.
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

ROOT = harness.ROOT


def legal_recording(path: Path, events: int, gpus: int) -> tuple[int, float]:
    """A simulated run's stream written line by line (never held) until `events` events."""
    from prover import events as ev
    from prover.record import RecordingHeader, _dump_line
    from tests.helpers.tui_synth import Synth

    class _Full(Exception):
        pass

    class Writing(Synth):
        def __init__(self, f: Any, **kw: Any) -> None:
            super().__init__(**kw)
            self.f, self.n = f, 0

        def emit(self, e: ev.Event) -> None:
            if self.n >= events - 1:
                raise _Full
            self.f.write(_dump_line(e) + b"\n")
            self.n += 1
            self.last_t = e.t

    per_partition = 54  # tui_synth's events a partition, samples included (measured)
    parts = events // per_partition + 1
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(RecordingHeader(argv=["bench_replay_memory"], note="synthetic legal stream").model_dump_json().encode() + b"\n")
        s = Writing(f, gpus=gpus, workers_per_gpu=3, sectors=parts // 1000 + 2, partitions=min(1000, parts))
        try:
            s.run()
        except _Full:
            f.write(_dump_line(ev.RunEnded(t=s.last_t, reason="duration")) + b"\n")
            s.n += 1
    return s.n, s.last_t


def alloc_recording(path: Path, events: int) -> tuple[int, float]:
    head = ('{"kind":"c2tui-recording","schema_version":3}\n'
            '{"kind":"run_started","t":0,"backend":"sim","simulated":true,"profile":"p","proved_log2":8,'
            '"modelled_log2":27,"gpus":1}\n'
            '{"kind":"gpu_info","t":0.1,"gpu":0,"name":"g","total_bytes":17179869184,"budget_bytes":17179869184,'
            '"simulated":true}\n')
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write(head)
        for i in range(events):
            f.write('{"kind":"alloc","t":%.4f,"gpu":0,"owner":"g0w%d","name":"d_%d","bytes":1}\n' % (0.2 + i * 1e-3, i % 16, i))
    return events + 2, 0.2 + (events - 1) * 1e-3


def measure(args: list[str], timeout: float = 900.0) -> dict:
    """One command as its own process: exit code, wall seconds, peak RSS (MB), its stderr's tail."""
    cmd = [sys.executable, "-m", "c2tui", *args]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    return {"cmd": "c2tui " + " ".join(Path(a).name if a.startswith("/") else a for a in args),
            "exit": p.returncode, "wall_s": round(time.monotonic() - t0, 2), "stderr": err.decode()[-300:]}


def run_one(args: list[str]) -> dict:
    """measure() in a fresh child interpreter, so RUSAGE_CHILDREN's maximum is this command's alone."""
    import json

    code = ("import json,resource,sys; sys.path.insert(0, %r); import bench_replay_memory as b; "
            "r = b.measure(%r); r['peak_rss_mb'] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1); "
            "print(json.dumps(r))") % (str(Path(__file__).parent), args)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_replay(file: Path, at: float, settle_s: float = 3.0) -> dict:
    """`c2tui replay FILE --paused --at AT` in a pseudo-terminal (it needs one), until drawn and
    idle (under 30 ms of CPU a half second for `settle_s`: its 10 Hz frames of a paused screen); its peak RSS is /proc's VmHWM, read before it is
    stopped (SIGTERM). wall_s: until it went idle (the load, the fold to AT, the first frames)."""
    import pty
    import select
    import signal

    args = ["replay", str(file), "--paused", "--at", f"{at:.3f}"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on the pty, 120x40
        os.chdir(ROOT)
        os.environ.update(TERM="xterm-256color", COLUMNS="120", LINES="40")
        os.execv(sys.executable, [sys.executable, "-m", "c2tui", *args])

    def cpu_ticks() -> int:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])

    t0, last, still = time.monotonic(), -100, 0.0
    while still < settle_s or time.monotonic() - t0 < 5:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                os.read(fd, 1 << 16)  # drain the screen, or the child blocks writing it
            except OSError:
                break
        c = cpu_ticks()
        still, last = (still + 0.5, c) if 0 <= c - last <= 2 else (0.0, c)  # idle: < 30 ms CPU a 0.5 s
    hwm = next(line for line in open(f"/proc/{pid}/status") if line.startswith("VmHWM")).split()[1]
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)
    return {"cmd": "c2tui " + " ".join(Path(a).name if a.startswith("/") else a for a in args), "exit": None,
            "wall_s": round(time.monotonic() - t0 - still, 2), "stderr": "", "peak_rss_mb": round(int(hwm) / 1024, 1)}


def main() -> None:
    from prover import bounds

    ap = harness.parser(__doc__, out=str(ROOT / "benchmarks" / "results" / "issue35" / "replay_memory.json"))
    ap.add_argument("--events", type=int, default=bounds.MAX_EVENTS)
    ap.add_argument("--allocs", type=int, default=100_000)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--skip-screenshot", action="store_true", help="summary only (the screenshot at the bound takes minutes)")
    ap.add_argument("--skip-replay", action="store_true", help="no `replay` in a pseudo-terminal")
    args = ap.parse_args()
    rows = harness.Rows(args.out, machine=harness.machine())
    with tempfile.TemporaryDirectory() as d:
        legal, allocs = Path(d) / "legal.jsonl.gz", Path(d) / "allocs.jsonl.gz"
        t0 = time.monotonic()
        n, end = legal_recording(legal, args.events, args.gpus)
        print(f"legal recording: {n} events, {legal.stat().st_size >> 20} MiB gzipped, {time.monotonic() - t0:.0f} s", flush=True)
        na, end_a = alloc_recording(allocs, args.allocs)
        # screenshots at the last event: the whole recording folded, every checkpoint taken
        jobs = [("legal", n, ["summary", "--json", str(legal)]), ("allocs", na, ["summary", "--json", str(allocs)]),
                ("allocs", na, ["screenshot", str(allocs), "--at", f"{end_a - 0.0005:.3f}", "-o", str(Path(d) / "a.svg")])]
        if not args.skip_screenshot:
            jobs.append(("legal", n, ["screenshot", str(legal), "--at", f"{end - 0.0005:.3f}", "-o", str(Path(d) / "l.svg")]))
        if not args.skip_replay:
            jobs.append(("legal", n, ["replay", str(legal), f"{end - 0.0005:.3f}"]))
        for name, events, cmd in jobs:
            r = run_replay(Path(cmd[1]), float(cmd[2])) if cmd[0] == "replay" else run_one(cmd)
            row = rows.new(recording=name, events=events, **r)
            rows.save()
            print(f"{name:7} {events:>8} {row['cmd'][:60]:60} exit {r['exit']} {r['wall_s']:7.1f} s {r['peak_rss_mb']:7.0f} MB", flush=True)


if __name__ == "__main__":
    main()
