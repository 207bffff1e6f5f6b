"""The case classes issue 24 added to the CLI fuzz (benchmarks/fuzz_cli.py): hostile output
targets for every writer, crafted recordings past the readers' bounds, export / config /
attach / serve / metrics options, stdout full or closed (a subprocess each), and probes of
the attach server, the metrics endpoint and serve's websocket guard. Each case is a dict:

    {"kind": "cli" | "sub" | "probe", "args": [...], "expect": None | exit status}

`expect` is the one documented status the case must end with (a refused output target is 2,
a full stdout 3); None: any documented status. A probe returns 0 when the server behaved.
"""
from __future__ import annotations

import asyncio
import atexit
import contextlib
import gzip
import io
import json
import os
import random
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_BUSY: list[socket.socket] = []


def busy_port() -> str:
    """A port held open for the whole fuzz: serve and metrics on it must fail cleanly."""
    if not _BUSY:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        atexit.register(s.close)
        _BUSY.append(s)
    return str(_BUSY[0].getsockname()[1])

HEAD = (b'{"kind":"c2tui-recording","schema_version":2}\n'
        b'{"kind":"run_started","t":0,"backend":"sim","simulated":true,"profile":"p","proved_log2":8,'
        b'"modelled_log2":27,"gpus":1}\n')
CRAFTED = [  # lines past a reader's bound: each must be a named bad line, never a crash
    b'{"kind":"host_joined","t":0.1,"host":"h0","node":"n","gpus":1000000000000,"gpu_offset":0}\n',
    b'{"kind":"host_joined","t":0.1,"host":"h0","node":"n","gpus":2,"gpu_offset":-5}\n',
    b'{"kind":"vram_sample","t":0.2,"gpu":0,"budget":1,"pool_reserved":0,"pool_used":0,"util":NaN}\n',
    b'{"kind":"vram_sample","t":0.2,"gpu":0,"budget":1,"pool_reserved":0,"pool_used":0,"util":Infinity}\n',
    b'{"kind":"lock_acquired","t":0.2,"gpu":0,"lock":"mem","worker":"w","wait":NaN}\n',
    b'{"kind":"gpu_info","t":0,"gpu":1023,"name":"x","total_bytes":1,"budget_bytes":1,"simulated":true}\n',
    b'{"kind":"note","t":0.3,"level":"info","text":' + b"[" * 3000 + b"]" * 3000 + b"}\n",
]


def crafted_recording(rng: random.Random, d: Path) -> str:
    kind = rng.randrange(5)
    p = d / ("c.jsonl.gz" if kind == 4 else "c.jsonl")
    if kind == 0:
        body = HEAD + rng.choice(CRAFTED)
    elif kind == 1:  # many hosts / workers
        body = HEAD + b"".join(b'{"kind":"worker_started","t":0.1,"gpu":0,"worker":"w%d","host":"h%d"}\n' % (i, i)
                               for i in range(rng.choice([70, 300])))
    elif kind == 2:  # a deep header
        body = b'{"kind":"c2tui-recording","schema_version":2,"config":' + b"[" * 2000 + b"]" * 2000 + b"}\n"
    elif kind == 3:  # 1024 GPUs claimed in a fleet
        body = HEAD.replace(b'"gpus":1', b'"gpus":0') + \
            b'{"kind":"host_joined","t":0.1,"host":"h0","node":"n","gpus":1024,"gpu_offset":0}\n'
    else:  # compressed, with a crafted line inside
        body = HEAD + b'{"kind":"note","t":0.1,"level":"info","text":"x"}\n' * 500 + rng.choice(CRAFTED)
    p.write_bytes(gzip.compress(body) if p.suffix == ".gz" else body)
    return str(p)


def hostile_target(rng: random.Random, d: Path, suffix: str) -> Path:
    """A path no writer may replace or write through: a FIFO, a symlink, a directory, a device
    node of our own (root only), or an existing file (without --force)."""
    kind = rng.choice(["fifo", "symlink", "dir", "existing", "device", "dangling"])
    p = d / f"out-{kind}{suffix}"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind in ("symlink", "dangling"):
        target = d / f"precious{suffix}"
        if kind == "symlink":
            target.write_text("precious\n")
        p.symlink_to(target)
    elif kind == "dir":
        p.mkdir()
    elif kind == "device" and os.geteuid() == 0:
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        p.write_text("precious\n")
    return p


def writer_case(rng: random.Random, w: Path, rec: str) -> dict:
    t = w / "target"
    cmd = rng.choice(["export", "screenshot", "record", "run", "prove", "compare"])
    if cmd == "prove":
        out = t / "out"
        out.mkdir()
        name = rng.choice(["proof.json", "verification_key.json", "public.json"])
        os.replace(hostile_target(rng, out, ".json"), out / name)
        args = ["prove", "--constraints-log2", "8", "--out", str(out), "--cache-dir", str(t / "keys")]
    else:
        suffix = {"export": ".json", "screenshot": ".svg", "compare": ".svg"}.get(cmd, ".jsonl")
        out = hostile_target(rng, t, suffix)
        args = {"export": ["export", rec, "-o", str(out)],
                "screenshot": ["screenshot", rec, "--at", "1", "--size", "80x24", "-o", str(out)],
                "record": ["record", "--out", str(out), "--backend", "sim", "--constraints-log2", "8",
                           "--time-scale", "0.05", "--sectors", "1", "-q"],
                "run": ["run", "--backend", "sim", "--record", str(out)],
                "compare": ["compare", rec, rec, "-o", str(out)]}[cmd]
    return {"kind": "cli", "cmd": f"{cmd} (output target)", "args": args, "expect": 2}


def option_case(cmd: str, rng: random.Random, w: Path, rec: str, value: Any) -> dict:
    """export / config / attach / serve / metrics with bad values (serve and metrics on a busy
    port when their options are good, so no case serves for real)."""
    t = w / "target"
    v = value(rng, w)
    if cmd == "export":
        args = ["export", rng.choice([rec, crafted_recording(rng, t), v]), "-o", str(t / "o.json")]
        args += rng.choice([[], ["--format", rng.choice(["csv", "perfetto", v])], ["-o", v]])
    elif cmd == "config":
        args = rng.choice([["config", "--show"], ["config", "--show", "--json"], ["config", "--check", v],
                           ["config", "--check", crafted_toml(rng, t)]])
    elif cmd == "attach":
        args = ["attach", rng.choice([v, str(t / "none.sock"), "tcp://0.0.0.0:1", "tcp://127.0.0.1:" + busy_port()])]
        args += rng.choice([[], ["--raw"], ["--send", v], ["--fps", v], ["--name", v]])
    elif cmd == "serve":
        args = ["serve", "--backend", "sim", "--port", busy_port()]
        args += rng.choice([["--fps", v], ["--max-provers", v], ["--allow-origin", v], ["--theme", v], ["--gpus", v],
                            ["--port", v], []])
    else:  # metrics
        args = ["record", "--out", str(t / "m.jsonl"), "--backend", "sim", "--sectors", "1", "-q", "--constraints-log2", "8",
                "--time-scale", "0.05", "--partitions", "2",
                "--metrics-port", rng.choice([busy_port(), v]), *rng.choice([[], ["--metrics-addr", v]])]
    return {"kind": "cli", "cmd": cmd, "args": args, "expect": None}


def crafted_toml(rng: random.Random, d: Path) -> str:
    p = d / "deep.toml"
    p.write_text(rng.choice(["gpus = " + "[" * 3000 + "]" * 3000, "gpus = [" + ",".join(map(str, range(500))) + "]",
                             "prestage_wait_s = inf", "time_scale = nan", "gpus = [0, 5000]", "x = {a = {b = {c = 1}}}"]))
    return str(p)


def stdout_case(rng: random.Random, rec: str) -> dict:
    """A real process whose stdout is full, closed or a pipe nobody reads: one line, status 3."""
    args = rng.choice([["summary", rec], ["summary", "--json", rec], ["config", "--show"], ["export", rec, "-o", "-"],
                       ["screenshot", rec, "--at", "1", "--size", "80x24", "-o", "-"], ["--help"]])
    return {"kind": "sub", "cmd": "stdout", "args": args, "how": rng.choice(["full", "closed", "pipe"]), "expect": 3}


def run_sub(case: dict, w: Path, box_s: float) -> dict:
    exe = [sys.executable, "-m", "c2tui", *case["args"]]
    env = os.environ | {"PYTHONPATH": str(ROOT), "HOME": str(w / "home")}
    t0 = time.perf_counter()
    try:
        if case["how"] == "full" and Path("/dev/full").exists():
            with open("/dev/full", "wb") as full:
                p = subprocess.run(exe, stdout=full, stderr=subprocess.PIPE, env=env, timeout=box_s, cwd=w)
            code, err = p.returncode, p.stderr
        elif case["how"] == "closed":
            import shlex
            p = subprocess.run(["sh", "-c", shlex.join(exe) + " >&-"], stderr=subprocess.PIPE, env=env,
                               timeout=box_s, cwd=w)
            code, err = p.returncode, p.stderr
        else:
            proc = subprocess.Popen(exe, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=w)
            proc.stdout.close()  # type: ignore[union-attr]
            _, err = proc.communicate(timeout=box_s)
            code = proc.returncode
    except subprocess.TimeoutExpired:
        return {"args": case["args"], "hang": True}
    text = err.decode("utf-8", "replace")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return {"args": [case["how"], *case["args"]], "seconds": round(time.perf_counter() - t0, 2), "code": code,
            "traceback": "Traceback" in text, "exc": None, "last_line": lines[-1][:300] if lines else "",
            "stray": [], "expect": case["expect"]}


# probes: the servers themselves --------------------------------------------------------------
def _attach_server(w: Path) -> Any:
    from prover.attach.server import AttachServer
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.pipeline.nullphases import NullPhases

    eng = Engine(load_config(None, backend="sim", profile="tiny", partitions=2), phases=NullPhases())
    return AttachServer(eng, str(w / "target" / "a.sock"), queue_bytes=1 << 16).start()


def first_line(s: socket.socket) -> dict:
    """The first JSON line a raw attach socket receives ({'kind': 'closed'} at EOF)."""
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return {"kind": "closed"}
        buf += chunk
    return json.loads(buf.split(b"\n", 1)[0])


def attach_probe(rng: random.Random, w: Path) -> tuple[str, bool]:
    import prover.attach.server as S
    from prover.attach.wire import PROTOCOL_VERSION

    HELLO = b'{"kind":"hello","protocol":%d,"client":"f"}\n' % PROTOCOL_VERSION

    srv = _attach_server(w)
    try:
        def conn() -> socket.socket:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            s.connect(srv.address.path)
            return s

        kind = rng.choice(["types", "flood", "pending", "garbage", "mute"])
        if kind == "types":
            proto = rng.choice(['"2"', "2.0", "true", "null", "[2]", "3", "-1", "1e400"])
            s = conn()
            s.sendall(b'{"kind":"hello","protocol":' + proto.encode() + b',"client":"f"}\n')
            return f"hello protocol {proto}", first_line(s)["kind"] == "refused"
        if kind == "flood":  # more hellos than clients
            socks = [conn() for _ in range(S.MAX_CLIENTS + 8)]
            kinds = []
            for s in socks:
                try:
                    s.sendall(HELLO)
                    kinds.append(first_line(s)["kind"])
                except OSError:  # past MAX_PENDING the oldest silent connection gives way (by design)
                    kinds.append("closed")
            return "hello flood", kinds.count("welcome") == S.MAX_CLIENTS and len(srv.clients) == S.MAX_CLIENTS
        if kind == "pending":  # idle strangers hold every place before hello: a client still gets in
            quiet = [conn() for _ in range(S.MAX_PENDING + rng.randrange(0, 8))]
            time.sleep(0.2)
            late = conn()
            late.sendall(HELLO)
            ok = first_line(late)["kind"] == "welcome" and len(srv._pending) <= S.MAX_PENDING
            for q in quiet:
                q.close()
            return "a client among idle connections before hello", ok
        s = conn()
        s.sendall(HELLO)
        first_line(s)
        if kind == "garbage":
            s.sendall(rng.randbytes(rng.randrange(1, 4000)) + b"\n" + b'{"kind":"control","id":"x","spec":1}\n')
            time.sleep(0.1)
            return "garbage after hello", bool(srv._threads[1].is_alive())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # mute: controls, never reads the replies
        s.settimeout(0.2)
        t0 = time.monotonic()
        try:
            for _ in range(300):
                s.sendall(b'{"kind":"control","id":1,"spec":"nope=1"}\n' * 50)
        except OSError:
            pass
        # paced (its lines wait in its socket), its replies bounded, and the server still takes a client
        other = conn()
        other.sendall(HELLO)
        welcomed = first_line(other)["kind"] == "welcome"
        from prover import bounds

        limit = bounds.CLIENT_LINES_PER_S * (time.monotonic() - t0 + 2)
        peer = next((p for p in srv._peers if p.name == "f"), None)
        paced = peer is None or (peer.queued + peer.waiting) <= limit * 200
        return "client that floods controls and never reads its replies", welcomed and paced
    finally:
        srv.close()


def metrics_probe(rng: random.Random) -> tuple[str, bool]:
    import urllib.request

    from prover.observe.metrics import MetricsExporter

    exp = MetricsExporter()
    port = exp.start(0, "127.0.0.1")
    try:
        junk = rng.choice([b"GARBAGE\r\n\r\n", b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", rng.randbytes(500), b"GET"])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(junk)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            return "metrics after junk", r.status == 200 and b"c2tui_" in r.read()
    finally:
        exp.stop()


def serve_probe(rng: random.Random) -> tuple[str, bool]:
    from aiohttp.test_utils import TestClient, TestServer

    from c2tui.dashboard.webserve import GuardedServer

    origin = rng.choice(["http://evil.example", "null", "file://", "http://127.0.0.1.evil.example", "https://x"])

    async def go() -> int:
        server = GuardedServer("true", host="127.0.0.1", port=0, title="t", max_provers=1)
        server.console.quiet = True  # its banner, once a probe
        client = TestClient(TestServer(await server._make_app()))
        await client.start_server()
        try:
            return (await client.get("/ws", headers={"Origin": origin})).status
        finally:
            await client.close()

    return f"websocket from origin {origin}", asyncio.run(go()) == 403


def run_probe(name: str, rng: random.Random, w: Path) -> dict:
    t0 = time.perf_counter()
    err = io.StringIO()  # a server thread's traceback on stderr is this probe's failure, not the next case's
    with contextlib.redirect_stderr(err):
        try:
            from fuzz_adversarial import PROBES as DRIPS  # issue 44's
            from fuzz_trust import PROBES  # issue 35's probes

            PROBES = {**PROBES, **DRIPS}

            probes = {"attach_probe": lambda: attach_probe(rng, w), "metrics_probe": lambda: metrics_probe(rng),
                      "serve_probe": lambda: serve_probe(rng), **{k: (lambda f=f: f(rng, w)) for k, f in PROBES.items()}}
            what, ok = probes[name]()
            exc = None
        except Exception as e:  # noqa: BLE001 - a probe that raises is a failure, reported
            what, ok, exc = name, False, f"{type(e).__name__}: {e}"[:300]
        time.sleep(0.1)  # handler threads answering a client that has gone
    printed = "Traceback" in err.getvalue()
    return {"args": [name, what], "seconds": round(time.perf_counter() - t0, 2), "code": 0 if ok else 1,
            "traceback": exc is not None or printed, "exc": exc or (err.getvalue()[-300:] if printed else None),
            "last_line": what, "stray": [], "expect": 0}
