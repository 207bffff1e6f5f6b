"""The case classes issue 35 added to the CLI fuzz (benchmarks/fuzz_cli.py), one a defect class
of its adversarial run:

- `inputs`: every input path given a FIFO, a device (/dev/zero), a directory or a socket:
  summary, replay, screenshot, export, compare, verify's three files, config --check,
  --config, --token-file of attach / status / record --listen (expected: 2, and no hang);
- `typed`: recordings whose lines are typed but absurd or coerced: strings for numbers
  ("t": "1.0"), 10^400-byte budgets, negative sizes, 10^30-byte allocs, t = 1e308, a 1 MB part
  name, 16 compute holders on one GPU, sector 10^12, gzipped blank lines past the event bound
  (summary, export, screenshot, replay: 2);
- `strict_toml`: TOML values of the wrong type (workers_per_gpu = true / 2.0, paused = "yes",
  a string for a rate) through --config and config --check (2);
- `linear` (w35): legal recordings that a quadratic reader or renderer hung on: 5k-20k live
  buffers then events a history bucket apart, notes of 8 KB of wide characters drawn 1000
  columns wide, 5k-20k partitions queued at once (summary, export, screenshot: 0);
- `names`: attach / status with a bad address or client name (unix:, 65 characters, a
  control character), attach --send "" and one-character tokens (2);
- probes `stalled_probe` (clients that never read: the server's bytes counted stay under its
  cap, a client over its share dropped), `rebind_probe` (serve answers no Host it does not
  listen as, takes no Origin of another name) and `offline_probe` (the served page loads
  nothing from another host).

Each case is a dict as fuzz_cases' (kind, args, expect).
"""
from __future__ import annotations

import asyncio
import gzip
import json
import os
import random
import re
import socket
import time
from pathlib import Path
from typing import Any

HEAD = (b'{"kind":"c2tui-recording","schema_version":3}\n'
        b'{"kind":"run_started","t":0,"backend":"sim","simulated":true,"profile":"p","proved_log2":8,'
        b'"modelled_log2":27,"gpus":1}\n'
        b'{"kind":"gpu_info","t":0.1,"gpu":0,"name":"g","total_bytes":17179869184,"budget_bytes":17179869184,'
        b'"simulated":true}\n')


def _acq(i: int) -> bytes:
    return (b'{"kind":"lock_acquired","t":%.3f,"gpu":0,"lock":"compute","worker":"g0w%d","wait":0}\n'
            % (0.2 + i / 1000, i))


TYPED = [  # (what, lines after HEAD)
    ("a time as a string", b'{"kind":"note","t":"1.0","text":"x"}\n'),
    ("a bool as a string", b'{"kind":"gpu_info","t":0.2,"gpu":0,"name":"g","total_bytes":1,"budget_bytes":1,'
                           b'"simulated":"yes"}\n'),
    ("a 10^400 budget", b'{"kind":"gpu_info","t":0.2,"gpu":0,"name":"g","total_bytes":1,"budget_bytes":1'
                        + b"0" * 400 + b',"simulated":true}\n'),
    ("a negative budget", b'{"kind":"vram_sample","t":0.2,"gpu":0,"budget":-1,"pool_reserved":0,"pool_used":0}\n'),
    ("a 10^30-byte alloc", b'{"kind":"alloc","t":0.2,"gpu":0,"owner":"g0w0","name":"d_a","bytes":1'
                           + b"0" * 30 + b"}\n"),
    ("t = 1e308", b'{"kind":"note","t":1e308,"text":"x"}\n'),
    ("a 1 MB part name", b'{"kind":"partition_queued","t":0.2,"part":"' + b"p" * 1_000_000 + b'","sector":0,"index":0}\n'),
    ("sector 10^12", b'{"kind":"partition_queued","t":0.2,"part":"s1p0","sector":1000000000000,"index":0}\n'),
    ("16 compute holders", b"".join(_acq(i) for i in range(16))),
    ("a float for an int", b'{"kind":"partition_queued","t":0.2,"part":"s1p0","sector":1.5,"index":0}\n'),
]


def typed_recording(rng: random.Random, d: Path) -> tuple[str, str]:
    if rng.random() < 0.15:  # blank lines past the event bound, gzipped (390 KB of them took 91 s)
        from prover import bounds

        p = d / "blank.jsonl.gz"
        p.write_bytes(gzip.compress(HEAD + b"\n" * (bounds.MAX_EVENTS + rng.randrange(1, 1000)), 1))
        return "blank lines past the bound", str(p)
    what, body = rng.choice(TYPED)
    p = d / "typed.jsonl"
    p.write_bytes(HEAD + body)
    return what, str(p)


def typed_case(rng: random.Random, w: Path) -> dict:
    t = w / "target"
    what, rec = typed_recording(rng, t)
    sub = rng.choice([["summary", rec], ["summary", "--json", rec], ["replay", rec],
                      ["export", rec, "-o", str(t / "o.json")], ["export", rec, "--format", "csv", "-o", str(t / "o.csv")],
                      ["screenshot", rec, "--at", "0", "-o", str(t / "s.svg")], ["compare", rec, rec]])
    return {"kind": "cli", "cmd": f"typed ({what})", "args": sub, "expect": 2}


def special_file(rng: random.Random, d: Path) -> tuple[str, Path]:
    """A path that is not a regular file: a FIFO (no writer: a read blocks forever), /dev/zero,
    a directory, or a Unix socket."""
    kind = rng.choice(["fifo", "fifo", "zero", "dir", "socket"])
    if kind == "zero":
        return kind, Path("/dev/zero")
    p = d / f"in-{kind}"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dir":
        p.mkdir()
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(p))
        s.close()
    return kind, p


def inputs_case(rng: random.Random, w: Path, good_proof: Path, good_rec: str) -> dict:
    t = w / "target"
    kind, sp = special_file(rng, t)
    f = str(sp)
    cmd = rng.choice(["summary", "replay", "screenshot", "export", "compare", "verify", "config", "record",
                      "token-attach", "token-status", "token-listen"])
    if cmd == "verify":
        d = t / "proof"
        d.mkdir()
        for name in ("proof.json", "verification_key.json", "public.json"):
            (d / name).write_bytes((good_proof / name).read_bytes())
        name = rng.choice(["proof.json", "verification_key.json", "public.json"])
        (d / name).unlink()
        if kind == "fifo":
            os.mkfifo(d / name)
        elif kind == "dir":
            (d / name).mkdir()
        else:
            (d / name).symlink_to(sp)
        args = ["verify", str(d)]
    else:
        args = {"summary": ["summary", f], "replay": ["replay", f], "screenshot": ["screenshot", f, "--at", "0", "-o",
                str(t / "s.svg")], "export": ["export", f, "-o", str(t / "o.json")], "compare": ["compare", good_rec, f],
                "config": ["config", "--check", f],
                "record": ["record", "--config", f, "--out", str(t / "r.jsonl"), "--backend", "sim", "--sectors", "1"],
                "token-attach": ["attach", "tcp://127.0.0.1:1", "--raw", "--token-file", f],
                "token-status": ["status", "tcp://127.0.0.1:1", "--token-file", f],
                "token-listen": ["record", "--listen", "tcp://127.0.0.1:1", "--token-file", f, "--out",
                                 str(t / "r.jsonl"), "--backend", "sim", "--sectors", "1"]}[cmd]
    return {"kind": "cli", "cmd": f"input {kind} ({cmd})", "args": args, "expect": 2}


STRICT_TOML = ["workers_per_gpu = true", "workers_per_gpu = 2.0", 'paused = "yes"', 'seed = "3"', "prestage = 1",
               'time_scale = "1"', '[faults]\noom_rate = "0.5"', "[faults]\nnvml_missing = 1",
               "[faults.phase_error]\nntt_h = true", '[faults.phase_error]\nnope = 0.5', "gpus = 1.0",
               "partitions = 1e3", 'sectors = "2"']


def strict_toml_case(rng: random.Random, w: Path) -> dict:
    p = w / "target" / "strict.toml"
    p.write_text(rng.choice(STRICT_TOML) + "\n")
    args = rng.choice([["config", "--check", str(p)], ["record", "--config", str(p), "--out", str(w / "target" / "r.jsonl"),
                                                       "--backend", "sim", "--sectors", "1", "-q"]])
    return {"kind": "cli", "cmd": "strict toml", "args": args, "expect": 2}


def names_case(rng: random.Random, w: Path) -> dict:
    t = w / "target"
    tok = t / "tok"
    tok.write_text(rng.choice(["x", "short", "a b c d e f g h i j", "é" * 300]) + "\n")
    args = rng.choice([
        ["status", rng.choice(["", "unix:", "tcp://evil.example:1", "ftp://x", "tcp://127.0.0.1:0"])],
        ["attach", "unix:", "--raw"], ["attach", str(t / "x.sock"), "--raw", "--name", "n" * 65],
        ["attach", str(t / "x.sock"), "--name", "bell\x07"], ["attach", str(t / "x.sock"), "--send", ""],
        ["attach", str(t / "x.sock"), "--raw", "--send", "pause"],
        ["attach", "tcp://127.0.0.1:1", "--raw", "--token-file", str(tok)],
        ["record", "--listen", "unix:", "--out", str(t / "r.jsonl"), "--backend", "sim", "--sectors", "1"],
        ["record", "--listen", "tcp://127.0.0.1:1", "--token-file", str(tok), "--out", str(t / "r.jsonl"),
         "--backend", "sim", "--sectors", "1"],
        ["serve", "--host", rng.choice(["", " "]), "--port", "1"],
        ["record", "--metrics-port", "0", "--metrics-addr", "", "--out", str(t / "m.jsonl"), "--backend", "sim"],
    ])
    return {"kind": "cli", "cmd": "names and addresses", "args": args, "expect": 2}


# probes --------------------------------------------------------------------------------------
def stalled_probe(rng: random.Random, w: Path) -> tuple[str, bool]:
    """Clients that never read while events flow: the bytes counted for them never pass the
    server's cap, and one over its share is dropped."""
    from prover import events as ev
    from prover.attach.server import AttachServer
    from prover.attach.wire import PROTOCOL_VERSION
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.pipeline.nullphases import NullPhases

    eng = Engine(load_config(None, backend="sim", profile="tiny", partitions=2), phases=NullPhases())
    srv = AttachServer(eng, str(w / "target" / "s.sock"), queue_bytes=1 << 20, server_queue_bytes=3 << 20).start()
    socks = []
    try:
        for i in range(rng.randrange(3, 9)):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(srv.address.path)
            s.sendall(json.dumps({"kind": "hello", "protocol": PROTOCOL_VERSION, "client": f"m{i}",
                                  "readonly": i % 2 == 1}).encode() + b"\n")
            socks.append(s)
        text = "x" * rng.choice([100, 2000, 8000])
        for k in range(rng.randrange(500, 2000)):
            srv.sink(ev.Note(t=k * 1e-3, text=text))
            if k % 200 == 0:
                time.sleep(0.02)
        time.sleep(0.3)
        ok = srv.budget.peak <= srv.budget.cap and (srv.budget.peak < srv.budget.cap // 2 or bool(srv.dropped))
        return f"{len(socks)} clients that never read", ok
    finally:
        srv.close()
        for s in socks:
            s.close()


def _guarded(**kw: Any) -> Any:
    from c2tui.dashboard.webserve import GuardedServer

    server = GuardedServer("true", port=0, title="t", max_provers=1, **kw)
    server.console.quiet = True
    return server


def rebind_probe(rng: random.Random) -> tuple[str, bool]:
    from aiohttp.test_utils import TestClient, TestServer

    name = rng.choice(["evil.example", "127.0.0.1.evil.example", "localhost.evil", "10.0.0.1", "[::1", "x:y:z"])
    path = rng.choice(["/", "/ws", "/static/js/textual.js"])

    async def go() -> int:
        client = TestClient(TestServer(await _guarded(host="127.0.0.1")._make_app()))
        await client.start_server()
        try:
            headers = {"Host": f"{name}:{client.port}", "Origin": f"http://{name}:{client.port}"}
            return (await client.get(path, headers=headers)).status
        finally:
            await client.close()

    return f"Host {name} asking {path}", asyncio.run(go()) == 403


def offline_probe(rng: random.Random) -> tuple[str, bool]:
    from aiohttp.test_utils import TestClient, TestServer

    async def go() -> list[str]:
        client = TestClient(TestServer(await _guarded(host="127.0.0.1")._make_app()))
        await client.start_server()
        try:
            page = await (await client.get("/")).text()
            texts = [page] + [await (await client.get(ref)).text()
                              for ref in re.findall(r'(?:href|src)="[^"]*?(/static/[^"]+)"', page)]
        finally:
            await client.close()
        loads = re.findall(r"""(?:href|src)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)|url\(\s*["']?\s*((?:https?:)?//[^"')\s]+)""",
                           "\n".join(texts))
        return [u for pair in loads for u in pair if u and "//127.0.0.1" not in u]

    outside = asyncio.run(go())
    return f"the page loads nothing from another host ({len(outside)} found)", outside == []


def linear_recording(rng: random.Random, d: Path) -> tuple[str, str, float]:
    """A legal recording that a quadratic reader or renderer would hang on (w35's audit): many
    live buffers then events spaced a history bucket apart, notes of wide characters at the
    text bound, or many partitions queued at once. (what, path, its last event's time)"""
    kind = rng.choice(["buffers", "wide", "queued"])
    lines, t = [], 0.2
    if kind == "buffers":
        n = rng.randrange(5000, 20000)
        lines += [b'{"kind":"alloc","t":0.2,"gpu":0,"owner":"g0w%d","name":"d_%d","bytes":1}\n' % (i % 16, i) for i in range(n)]
        lines += [b'{"kind":"note","t":%.1f,"text":"x"}\n' % (t := 1.0 + 2.5 * i) for i in range(rng.randrange(500, 2000))]
    elif kind == "wide":
        text = rng.choice(["\u754c", "\U0001f600", "a\u754c"]).encode() * (8192 // 2)
        lines += [b'{"kind":"note","t":%.1f,"text":"%s"}\n' % (t := 0.2 + i, text) for i in range(rng.randrange(20, 80))]
    else:
        n = rng.randrange(5000, 20000)
        lines += [b'{"kind":"partition_queued","t":0.2,"part":"s%dp%d","sector":%d,"index":%d}\n'
                  % (i // 1000, i % 1000, i // 1000, i % 1000) for i in range(n)]
    p = d / f"linear-{kind}.jsonl"
    p.write_bytes(HEAD + b"".join(lines))
    return kind, str(p), t


def linear_case(rng: random.Random, w: Path) -> dict:
    t = w / "target"
    what, rec, end = linear_recording(rng, t)
    sub = rng.choice([["summary", rec], ["summary", "--json", rec], ["export", rec, "-o", str(t / "o.json"), "--force"],
                      ["screenshot", rec, "--at", f"{end:.1f}", "--size", rng.choice(["120x40", "1000x60"]),
                       "-o", str(t / "s.svg"), "--force"]])
    return {"kind": "cli", "cmd": f"linear ({what})", "args": sub, "expect": 0}


PROBES = {"stalled_probe": lambda rng, w: stalled_probe(rng, w), "rebind_probe": lambda rng, w: rebind_probe(rng),
          "offline_probe": lambda rng, w: offline_probe(rng)}
CLASSES = ["inputs", "typed", "strict_toml", "names", "linear", *PROBES]
