"""The case classes issue 44 added to the CLI fuzz (benchmarks/fuzz_cli.py), the classes its
adversarial run found the fuzz never drew:

- `experiment`, `tune`, `compare`, `status`: the four commands, with bad and good arms, knob
  lists, designs, times, addresses and recordings (a good experiment or tune runs for real on
  the sim, in seconds); `status` against a live attach server that goes away mid-watch (5);
- `signals`: a real process (a dashboard in a pty: replay, compare --tui, attach; or record,
  experiment, attach --raw, status --watch) sent SIGINT, SIGTERM, SIGHUP or two SIGINTs 1 ms
  apart once it runs: 3, the terminal put back (alternate screen left, mouse off), a recording
  ended with run_ended;
- `inside`: recordings whose values inside lists and maps are varied (NaN, infinities, 1e308,
  2^100, negative, long, wrong types, a key twice, a GPU the run lacks, overlapping hosts),
  through summary, export, screenshot and compare: 0 or 2, never a traceback;
- `drip_probe`: clients that drip their request a byte at a time (the metrics endpoint, the
  attach server's hello, serve's HTTP): a scrape, a client, a page are still answered.

Each case is a dict as fuzz_cases' (kind, args, expect); "adv" cases run here (run_adv).
"""
from __future__ import annotations

import atexit
import copy
import fcntl
import json
import os
import pty
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
C2TUI = [sys.executable, "-m", "c2tui"]
SIM = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05"]

ARMS_GOOD = ["lock_mode=single", "lock_mode=two-lock,mem_sync=stream", "workers_per_gpu=2", "prestage=off", "reserved",
             "b_g2=cpu", "lock_mode=narrow,workers_per_gpu=3"]
ARMS_BAD = ["", ",", "lock_mode=", "=x", "warp=1", "lock_mode=triple", "workers_per_gpu=99", "paused=on",
            "lock_mode=single,lock_mode=narrow", "x" * 300, "workers_per_gpu=1.5", "vram_budget=1e999GiB",
            "lock_mode=single;rm", "lock_mode=single,,", "mem_sync=stream=device", "workers_per_gpu=-1"]
NUMS = ["0", "-1", "nan", "inf", "1e999", "abc", "", "0.1", "1", "3", "99999999999", "1e-9", "2.5"]


def _pick(rng: random.Random, good: list[str], bad: list[str], p_bad: float = 0.35) -> str:
    return rng.choice(bad) if rng.random() < p_bad else rng.choice(good)


def _addr(rng: random.Random, t: Path, busy: str) -> str:
    return rng.choice([str(t / "none.sock"), "tcp://127.0.0.1:" + busy, "unix:", "tcp://8.8.8.8:1", "", "x" * 300,
                       str(t), "/dev/null"])


def attached_case(rng: random.Random, w: Path, cmd: str) -> dict:
    """An experiment or a tune on the fuzz's live prover: its knobs after must be those before."""
    if cmd == "experiment":
        arms = rng.sample(ARMS_GOOD, rng.choice([2, 2, 3]))
        args = ["experiment", *[x for a in arms for x in ("--arm", a)], "--cycles", "1", "--hold", "1", "--settle", "0.2"]
    else:  # (never --apply: that leaves the best in force on purpose)
        knob = rng.choice(["workers_per_gpu", "lock_mode", "prestage"])
        args = ["tune", "--search", knob, "--time", "20", "--hold", "1", "--settle", "0.2", "--confirm-cycles", "3",
                *{"workers_per_gpu": ["--workers", "2..3"], "lock_mode": ["--values", "lock_mode=single/two-lock"]}.get(knob, [])]
    return {"kind": "adv", "cmd": "attached", "args": [*args, "-q", "--attach", shared_prover(w.parent), "--name", "fz"],
            "expect": None}


def experiment_case(rng: random.Random, w: Path, busy: str) -> dict:
    if rng.random() < 0.2:
        return attached_case(rng, w, "experiment")
    t = w / "target"
    if rng.random() < 0.25:  # a good one, run for real
        return {"kind": "cli", "cmd": "experiment", "expect": 0,
                "args": ["experiment", *[x for a in rng.sample(ARMS_GOOD, 2) for x in ("--arm", a)], *SIM, "--cycles", "1",
                         "--hold", "1", "--settle", "0.2", "-q", "--design", rng.choice(["abab", "blocks"]),
                         *rng.choice([[], ["--json"], ["--out", str(t / "e.jsonl")]])]}
    arms = [_pick(rng, ARMS_GOOD, ARMS_BAD, 0.2) for _ in range(rng.choice([1, 2, 2, 2, 3]))]
    args = ["experiment", *[x for a in arms for x in ("--arm", a)], *SIM, "--cycles", "1", "--hold", "1",
            "--settle", "0.2", "-q", "--design", "abab"]
    for _ in range(rng.randrange(0, 3)):
        opt = rng.choice(["--cycles", "--hold", "--settle", "--design", "--attach", "--out", "--json", "--seed",
                          "--gpus", "--name"])
        if opt == "--json":
            args.append(opt)
        elif opt == "--design":
            args += [opt, rng.choice(["blocks", "abab", "aabb", ""])]
        elif opt == "--attach":
            args += [opt, _addr(rng, t, busy)]
        elif opt == "--out":
            args += [opt, rng.choice([str(t / "e.jsonl"), str(t) + "/", "/dev/null", str(t / "no" / "e.jsonl")])]
        elif opt == "--hold":
            args += [opt, rng.choice(["1", "0.2", "nan", "-1", "1e999", "0.5"])]
        else:
            args += [opt, rng.choice(NUMS)]
    return {"kind": "cli", "cmd": "experiment", "args": args, "expect": None}


def tune_case(rng: random.Random, w: Path, busy: str) -> dict:
    if rng.random() < 0.2:
        return attached_case(rng, w, "tune")
    t = w / "target"
    if rng.random() < 0.25:  # a good one, run for real
        return {"kind": "cli", "cmd": "tune", "expect": 0,
                "args": ["tune", *SIM, "--search", "workers_per_gpu", "--workers", "1..2", "--time", "20", "--hold", "1",
                         "--settle", "0.2", "--confirm-cycles", "3", "-q", *rng.choice([[], ["--json"]])]}
    args = ["tune", *SIM, "--search", rng.choice(["workers_per_gpu", "lock_mode", "warp", "", "prestage,b_g2"]),
            "--workers", rng.choice(["1..2", "2..1", "0..99", "x", "2", "1..16"]), "--time", rng.choice(["20", "1", "nan", "0"]),
            "--hold", "1", "--settle", "0.2", "--confirm-cycles", "3", "-q"]
    for _ in range(rng.randrange(0, 3)):
        opt = rng.choice(["--values", "--apply", "--attach", "--hold", "--settle", "--confirm-cycles", "--json", "--out"])
        if opt in ("--apply", "--json"):
            args.append(opt)
        elif opt == "--values":
            args += [opt, rng.choice(["lock_mode=two-lock/reserved", "lock_mode", "workers_per_gpu=2/x", "warp=1/2",
                                      "prestage=on/off", "lock_mode=", "=/"])]
        elif opt == "--attach":
            args += [opt, _addr(rng, t, busy)]
        elif opt == "--out":
            args += [opt, rng.choice([str(t / "t.jsonl"), "/dev/null", str(t) + "/"])]
        else:
            args += [opt, rng.choice(NUMS)]
    return {"kind": "cli", "cmd": "tune", "args": args, "expect": None}


def compare_case(rng: random.Random, w: Path, good_rec: str) -> dict:
    t = w / "target"
    a = rng.choice([good_rec, good_rec, inside_recording(rng, t, "a"), str(t / "missing.jsonl"), str(t)])
    b = rng.choice([good_rec, inside_recording(rng, t, "b")])
    args = ["compare", a, b] + ([good_rec] if rng.random() < 0.2 else [])
    for _ in range(rng.randrange(0, 3)):
        opt = rng.choice(["--align", "--window", "--json", "-o", "--at", "--size", "--theme"])
        if opt == "--json":
            args.append(opt)
        elif opt == "--align":
            args += [opt, rng.choice(["start", "first-gpu", "steady", "x", ""])]
        elif opt == "-o":
            args += [opt, rng.choice([str(t / "c.svg"), str(t / "c.txt"), str(t) + "/", "/dev/null"])]
        elif opt == "--size":
            args += [opt, rng.choice(["80x24", "0x0", "100000x400", "x", "120x40"])]
        elif opt == "--theme":
            args += [opt, rng.choice(["dark", "light", "nope"])]
        else:
            args += [opt, rng.choice(NUMS)]
    return {"kind": "cli", "cmd": "compare", "args": args, "expect": None}


def status_case(rng: random.Random, w: Path, busy: str) -> dict:
    """status with bad options, or against a live attach server (closed after a while when
    watched: then the stream stops without the run's end, 5)."""
    t = w / "target"
    live = rng.random() < 0.5
    args = ["status", str(t / "a.sock") if live else _addr(rng, t, busy)]
    extra = rng.choice([[], ["--json"], ["--watch", rng.choice(NUMS + ["0.5"])], ["--timeout", rng.choice(NUMS)],
                        ["--watch", "0.5", "--json"], ["--token-file", "/dev/zero"]])
    return {"kind": "adv", "cmd": "status", "args": args + extra, "expect": None, "server": live}


# --- values inside lists and maps -----------------------------------------------------------
HOSTILE: list[Any] = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 2**100, -1, -(2**70), "", "x" * 300,
                      [], {}, None, True, "gpu999", [[[[1]]]], {"a": {"b": float("nan")}}, 255, 1.5, "é" * 200]


def _base_events() -> list[dict]:
    """A small run whose events carry lists and maps (each kind that has one)."""
    ev = [{"kind": "run_started", "t": 0, "backend": "sim", "simulated": True, "profile": "p", "proved_log2": 8,
           "modelled_log2": 27, "gpus": 2, "config": {"workers_per_gpu": 2, "time_scale": 0.5, "faults": {"oom_rate": 0.0}}},
          *({"kind": "gpu_info", "t": 0.01, "gpu": g, "name": "g", "total_bytes": 1 << 34, "budget_bytes": 1 << 34,
             "simulated": True} for g in (0, 1))]
    for i in range(6):
        t0 = 0.1 + i * 0.3
        part = f"s0p{i}"
        ev += [{"kind": "partition_queued", "t": t0, "part": part, "sector": 0, "index": i},
               {"kind": "lock_acquired", "t": t0 + 0.01, "gpu": i % 2, "lock": "compute", "worker": f"g{i % 2}w0",
                "part": part, "wait": 0.01},
               {"kind": "lock_released", "t": t0 + 0.1, "gpu": i % 2, "lock": "compute", "worker": f"g{i % 2}w0",
                "part": part, "hold": 0.09},
               {"kind": "proof_result", "t": t0 + 0.2, "part": part, "ok": True},
               {"kind": "partition_done", "t": t0 + 0.2, "part": part, "ok": True, "seconds": 0.2}]
    ev += [{"kind": "host_health", "t": 2.0, "cpu_busy": [0.5, 0.25, 1.0], "cpu_pressure": 0.1},
           {"kind": "gpu_health", "t": 2.0, "gpu": 0, "temp_c": 50.0, "throttle": ["sw_power_cap"],
            "procs": [{"pid": 7, "bytes": 1 << 20, "name": "c2tui", "mine": True}]},
           {"kind": "vram_mark", "t": 2.01, "gpu": 1, "part": "s0p5", "worker": "g1w0", "live": 1, "cached": 2,
            "owners": {"g1w0": 1 << 20}},
           {"kind": "queue_wait", "t": 2.02, "proof_class": "c2", "waiting": 1, "reason": "x", "gpus": [0, 1]},
           {"kind": "job_action", "t": 2.03, "action": "cordon", "target": "gpu1", "source": "key"},
           {"kind": "experiment_started", "t": 2.1, "experiment": 0, "arms": ["a", "b"],
            "knobs": [{"lock_mode": "single"}, {"lock_mode": "narrow"}], "design": "abab", "cycles": 1, "hold_s": 0.2,
            "settle_s": 0.0},
           {"kind": "hold_started", "t": 2.11, "experiment": 0, "hold": 0, "arm": 1, "cycle": 0, "hold_s": 0.2, "settle_s": 0.0},
           {"kind": "hold_ended", "t": 2.3, "experiment": 0, "hold": 0, "arm": 1, "cycle": 0, "complete": True},
           {"kind": "experiment_ended", "t": 2.31, "experiment": 0, "reason": "done", "result": {"arms": []}},
           {"kind": "run_ended", "t": 2.5, "reason": "done"}]
    return ev


def _containers(obj: Any, path: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(obj, dict):
        out.append(path)
        for k, v in obj.items():
            out += _containers(v, path + (k,))
    elif isinstance(obj, list):
        out.append(path)
        for i, v in enumerate(obj):
            out += _containers(v, path + (i,))
    return out


def inside_recording(rng: random.Random, d: Path, name: str = "i") -> str:
    """The base run with one value inside a list or map varied (or a key twice, a GPU the run
    lacks, overlapping hosts)."""
    events = _base_events()
    how = rng.randrange(10)
    extra: list[bytes] = []
    if how == 0:  # a key twice in one object
        i = rng.randrange(1, len(events) - 1)
        k = rng.choice([k for k in events[i] if k != "kind"])
        line = json.dumps(events[i])
        extra = [line[:-1].encode() + f', "{k}": {json.dumps(rng.choice(HOSTILE[5:10]), allow_nan=True)}}}'.encode()]
        del events[i]
    elif how == 1:  # a GPU the run lacks, named where a GPU goes
        e = rng.choice([x for x in events if "gpu" in x or x["kind"] in ("job_action", "queue_wait")])
        if e["kind"] == "job_action":
            e["target"] = rng.choice(["gpu2", "gpu255", "s0p1", "gpu-1", "gpu", "gpu01", "gpu²"])
        elif e["kind"] == "queue_wait":
            e["gpus"] = [0, rng.choice([2, 255, -1])]
        else:
            e["gpu"] = rng.choice([2, 255, 1023])
    elif how == 2:  # overlapping hosts
        events.insert(1, {"kind": "host_joined", "t": 0.0, "host": "h0", "node": "a", "gpus": 2, "gpu_offset": 0})
        events.insert(2, {"kind": "host_joined", "t": 0.0, "host": "h1", "node": "b", "gpus": 2,
                          "gpu_offset": rng.choice([0, 1, 2])})
    else:  # a value inside a list or a map
        with_inside = [x for x in events if any(isinstance(v, (list, dict)) for v in x.values())]
        e = rng.choice(with_inside)
        paths = [p for p in _containers(e) if p]
        p = rng.choice(paths)
        box = e
        for k in p:
            box = box[k]
        if isinstance(box, list) and box:
            box[rng.randrange(len(box))] = copy.deepcopy(rng.choice(HOSTILE))
        elif isinstance(box, list):
            box.append(copy.deepcopy(rng.choice(HOSTILE)))
        elif isinstance(box, dict) and box:
            key = rng.choice(list(box) + ["x" * 200])
            box[key] = copy.deepcopy(rng.choice(HOSTILE))
        if rng.random() < 0.2 and e["kind"] == "experiment_started":
            e["knobs"] = e["knobs"][: rng.randrange(0, 2)]
    head = b'{"kind":"c2tui-recording","schema_version":3}\n'
    body = b"".join(json.dumps(x, allow_nan=True).encode() + b"\n" for x in events[:-1]) + b"".join(x + b"\n" for x in extra)
    p = d / f"{name}.jsonl"
    p.write_bytes(head + body + json.dumps(events[-1]).encode() + b"\n")
    return str(p)


def inside_case(rng: random.Random, w: Path, good_rec: str) -> dict:
    t = w / "target"
    rec = inside_recording(rng, t)
    args = rng.choice([["summary", rec], ["summary", "--json", rec], ["export", rec, "-o", str(t / "o.json")],
                       ["export", rec, "--format", "csv", "-o", str(t / "o.csv")], ["replay", rec],
                       ["screenshot", rec, "--at", rng.choice(["0.5", "2.2", "2.5"]), "--size", "120x40", "-o",
                        str(t / "s.svg")], ["compare", rec, good_rec], ["compare", rec, rec, "--json"]])
    return {"kind": "cli", "cmd": "values inside", "args": args, "expect": None}


def inside_good_recording(d: Path) -> str:
    p = d / "inside_good.jsonl"
    p.write_bytes(b'{"kind":"c2tui-recording","schema_version":3}\n'
                  + b"".join(json.dumps(x).encode() + b"\n" for x in _base_events()))
    return str(p)


# --- signals to real processes --------------------------------------------------------------
_PROVER: dict[str, Any] = {}


def shared_prover(base: Path) -> str:
    """One `record --listen` for the whole fuzz (attach and status targets), ended at exit."""
    if "sock" not in _PROVER:
        d = base / "prover"
        d.mkdir(parents=True, exist_ok=True)
        sock = d / "p.sock"
        proc = subprocess.Popen([*C2TUI, "record", *SIM, "--gpus", "2", "--duration", "86400", "-q", "-o",
                                 str(d / "r.jsonl"), "--listen", str(sock)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=os.environ | {"PYTHONPATH": str(ROOT)})
        atexit.register(lambda: (proc.poll() is None and proc.send_signal(signal.SIGTERM), proc.wait(60)))
        end = time.monotonic() + 120
        while not sock.exists() and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.05)
        _PROVER.update(sock=str(sock), proc=proc)
        _set_by_hand(str(sock))
    return _PROVER["sock"]


def _set_by_hand(sock: str) -> None:
    """Knobs other than the run's start, set by attach: an experiment must leave these, not those."""
    from prover.attach.client import AttachClient, RemoteController

    c = AttachClient(sock, name="fz-hand")
    c.connect()
    c.start(lambda e: None)
    remote = RemoteController(c)
    for spec in ("lock_mode=reserved", "workers_per_gpu=3", "prestage=off"):
        remote.apply(spec)
    c.close()


TARGETS = ["replay", "compare --tui", "attach", "attach --raw", "status --watch", "record", "experiment"]
SIGNALS = {"INT": [signal.SIGINT], "TERM": [signal.SIGTERM], "HUP": [signal.SIGHUP], "INT INT": [signal.SIGINT] * 2,
           "TERM HUP": [signal.SIGTERM, signal.SIGHUP]}
DASHBOARDS = ("replay", "compare --tui", "attach")


def signal_case(rng: random.Random, w: Path, good_rec: str) -> dict:
    target, sig = rng.choice(TARGETS), rng.choice(list(SIGNALS))
    return {"kind": "adv", "cmd": "signals", "args": [target, sig], "target": target, "sig": sig, "rec": good_rec,
            "expect": 3}


def _argv(case: dict, w: Path) -> tuple[list[str], Path | None]:
    t, rec, target = w / "target", case["rec"], case["target"]
    out = None
    if target == "replay":
        argv = ["replay", rec]
    elif target == "compare --tui":
        argv = ["compare", rec, rec, "--tui"]
    elif target == "record":
        out = t / "r.jsonl"
        argv = ["record", *SIM, "--duration", "120", "-q", "-o", str(out)]
    elif target == "experiment":
        out = t / "e.jsonl"
        argv = ["experiment", "--arm", "single", "--arm", "two-lock", *SIM, "--cycles", "20", "--hold", "2",
                "--settle", "0.2", "-q", "-o", str(out)]
    else:
        sock = shared_prover(w.parent)
        argv = {"attach": ["attach", sock], "attach --raw": ["attach", sock, "--raw"],
                "status --watch": ["status", sock, "--watch", "0.5"]}[target]
    return [*C2TUI, *argv], out


def _runs(case: dict, screen: bytearray, out: Path | None) -> bool:
    """The process is at work: a dashboard drawn, a line of events or a frame, a recording begun."""
    target = case["target"]
    if target in DASHBOARDS:
        return b"\x1b[?1049h" in screen and b"theme" in screen
    if target == "attach --raw":
        return b'"kind"' in screen
    if target == "status --watch":
        return b"knobs" in screen
    try:
        return out is not None and (b'"hold_started"' if target == "experiment" else b'"lock_acquired"') in out.read_bytes()
    except OSError:
        return False


def run_signal(case: dict, w: Path, box_s: float) -> dict:
    argv, out = _argv(case, w)
    # the pty's size is the terminal's: a COLUMNS / LINES inherited (a test worker's 80x24) would win
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {
        "PYTHONPATH": str(ROOT), "HOME": str(w / "home"), "TERM": "xterm-256color", "C2TUI_CONFIG_DIR": str(w / "home")}
    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(w)
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen, code, sent, why = bytearray(), None, False, ""
    deadline = time.monotonic() + box_s + 60  # start-up (numba cache) is not the signal's
    try:
        while time.monotonic() < deadline:
            if not sent and _runs(case, screen, out):
                for i, s in enumerate(SIGNALS[case["sig"]]):
                    os.kill(pid, s)
                    if i == 0:
                        time.sleep(0.001)
                sent, deadline = True, time.monotonic() + 30
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    screen += os.read(fd, 1 << 16)
                except OSError:
                    pass
    finally:
        if code is None:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        os.close(fd)
    if code is None:
        return {"args": case["args"], "hang": True, "alive": False, "seconds": round(time.perf_counter() - t0, 2)}
    if not sent:
        why = "it ended before it ran"
    elif case["target"] in DASHBOARDS:
        tail = screen[screen.rfind(b"\x1b[?1049h"):]
        why = "" if b"\x1b[?1049l" in tail and b"\x1b[?1000l" in tail else "the terminal was not put back"
    elif out is not None:
        from prover.record import read_recording

        rec = read_recording(out)
        last = rec.events[-1].kind if rec.events else None
        why = "" if rec.error is None and last == "run_ended" else f"the recording ends {last} ({rec.error})"
    text = screen.decode("utf-8", "replace")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return {"args": [*case["args"], *argv[2:]], "seconds": round(time.perf_counter() - t0, 2),
            "code": code if not why else 99, "traceback": "Traceback" in text, "exc": why or None,
            "last_line": (why or (lines[-1] if lines else "signalled"))[:300], "stray": [], "expect": 3}


# --- status against a live server -----------------------------------------------------------
def run_status(case: dict, w: Path, box_s: float, run_case: Any) -> dict:
    srv = None
    if case["server"]:
        import fuzz_cases

        srv = fuzz_cases._attach_server(w)
        if "--watch" in case["args"]:  # the server goes away mid-watch: the stream stops, no run_ended
            threading.Timer(1.5, lambda: srv.close("server closing")).start()
    try:
        return run_case(case["args"], w, box_s) | {"expect": case["expect"]}
    finally:
        if srv is not None:
            srv.close()


# --- clients that drip --------------------------------------------------------------------------
def _drippers(connect: Any, first: bytes, n: int, every: float, stop: threading.Event) -> list[threading.Thread]:
    def drip() -> None:
        try:
            with connect() as s:
                for b in first:
                    if stop.wait(every):
                        return
                    s.sendall(bytes([b]))
                stop.wait()
        except OSError:
            pass
    threads = [threading.Thread(target=drip, daemon=True) for _ in range(n)]
    for th in threads:
        th.start()
    return threads


def drip_probe(rng: random.Random, w: Path) -> tuple[str, bool]:
    what = rng.choice(["metrics", "attach", "serve"])
    n, every = rng.choice([10, 40]), rng.choice([0.2, 1.0])
    stop = threading.Event()
    try:
        if what == "metrics":
            import urllib.request

            from prover.observe.metrics import MetricsExporter

            exp = MetricsExporter()
            port = exp.start(0, "127.0.0.1")
            try:
                _drippers(lambda: socket.create_connection(("127.0.0.1", port)), b"GET /metrics HTTP/1.1\r\nX: " + b"y" * 60,
                          n, every, stop)
                time.sleep(0.5)
                ok = 0
                for _ in range(5):
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=3) as r:
                        ok += r.status == 200
                return f"{n} clients dripping a metrics request every {every} s", ok == 5
            finally:
                stop.set()
                exp.stop()
        if what == "attach":
            import fuzz_cases

            from prover.attach.client import AttachClient

            srv = fuzz_cases._attach_server(w)
            try:
                def unix() -> socket.socket:
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(srv.address.path)
                    return s
                _drippers(unix, b'{"kind":"hello","protocol":2,"client":"drip"}\n', n, every, stop)
                time.sleep(0.5)
                c = AttachClient(srv.address.path, name="real")
                ok = c.connect(timeout=5) is not None
                c.close()
                return f"{n} clients dripping their hello every {every} s", ok
            finally:
                stop.set()
                srv.close()
        return _drip_serve(n, every, stop)
    finally:
        stop.set()


def _drip_serve(n: int, every: float, stop: threading.Event) -> tuple[str, bool]:
    import asyncio

    from aiohttp import ClientSession, ClientTimeout, web

    from c2tui.dashboard.webserve import GuardedServer

    async def go() -> bool:
        server = GuardedServer("true", host="127.0.0.1", port=0, title="t", max_provers=1)
        server.console.quiet = True
        runner = web.AppRunner(await server._make_app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        try:
            await asyncio.to_thread(_drippers, lambda: socket.create_connection(("127.0.0.1", port)),
                                    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"y" * 60, n, every, stop)
            await asyncio.sleep(0.5)
            async with ClientSession(timeout=ClientTimeout(total=5)) as s:
                async with s.get(f"http://127.0.0.1:{port}/") as r:
                    return r.status == 200
        finally:
            stop.set()
            await runner.cleanup()

    return f"{n} clients dripping a page request every {every} s", asyncio.run(go())


CLASSES = ["experiment", "tune", "compare", "status", "signals", "inside", "drip_probe"]
PROBES = {"drip_probe": drip_probe}
HEAVY = ["signals", "drip_probe"]  # a real process or many clients a case: left to the full run


def make(cmd: str, rng: random.Random, w: Path, good_rec: str, busy: str) -> dict:
    if cmd == "experiment":
        return experiment_case(rng, w, busy)
    if cmd == "tune":
        return tune_case(rng, w, busy)
    if cmd == "compare":
        return compare_case(rng, w, good_rec)
    if cmd == "status":
        return status_case(rng, w, busy)
    if cmd == "signals":
        return signal_case(rng, w, inside_good_recording(w / "target"))
    if cmd == "inside":
        return inside_case(rng, w, inside_good_recording(w / "target"))
    return {"kind": "probe", "cmd": cmd, "args": [cmd], "expect": 0}


def prover_knobs(sock: str) -> dict[str, str]:
    """The live prover's knobs now (its whole history folded, read-only)."""
    from prover.attach.client import AttachClient
    from prover.experiment.link import Live

    live, c = Live(), AttachClient(sock, name="fz-look", readonly=True)
    c.connect()
    c.start(live)
    end = time.monotonic() + 20
    while not c.live and time.monotonic() < end:
        time.sleep(0.02)
    c.close()
    return live.knobs()


def run_attached(case: dict, w: Path, box_s: float, run_case: Any) -> dict:
    sock = case["args"][case["args"].index("--attach") + 1]
    before = prover_knobs(sock)
    res = run_case(case["args"], w, box_s + 30)
    after = prover_knobs(sock)
    if after != before and not res.get("hang"):
        moved = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}
        res |= {"code": 99, "exc": f"the prover was not left as found: {moved}", "last_line": f"knobs moved: {moved}"}
    return res | {"expect": case["expect"]}


def run_adv(case: dict, w: Path, box_s: float, run_case: Any) -> dict:
    if case["cmd"] == "signals":
        return run_signal(case, w, box_s)
    if case["cmd"] == "attached":
        return run_attached(case, w, box_s, run_case)
    return run_status(case, w, box_s, run_case)
