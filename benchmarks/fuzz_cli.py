"""Fuzz every `c2tui` subcommand with bad arguments, configs, proof files and recordings
(issue 16): each case must end with a documented exit status (c2tui/cli/exits.py: 0..3), no
traceback, an error that is one line (the output's last line names it), within a time box,
and with nothing written outside its own target directory. Seeded, so a failure reproduces.

    python benchmarks/fuzz_cli.py --seconds 45 --out benchmarks/results/fuzz_cli.json

Cases run in-process through click's CliRunner (a subprocess per case would spend the whole
budget importing); a SIGALRM time box turns a hang into a counted failure. `run` and `replay`
would open the full-screen dashboard when their arguments are good: during each case (and
only then) DashboardApp.run is a no-op, so those cases check everything up to the screen.

Issue 24 added the case classes of benchmarks/fuzz_cases.py (EXTRA below): hostile output
targets for every writer (expected status 2), crafted recordings past the readers' bounds
(2), export / config / attach / serve / metrics options, stdout full, closed or a dead pipe
(a subprocess each, expected 3), and probes of the attach server, the metrics endpoint and
serve's websocket guard. A case with an expected status that ends otherwise is a wrong exit.

Issue 35 added benchmarks/fuzz_trust.py's classes (FIFO and device inputs, typed-but-absurd
recordings, strict TOML, names and addresses; probes of stalled clients, DNS rebinding and
the page's outside loads) and a memory check: no case may take the fuzz (or a child it waited
for) past MEMORY_MB. DashboardApp.run is a no-op during a case only, never after it.

Issue 44 added benchmarks/fuzz_adversarial.py's classes, those its adversarial run found the fuzz
never drew: the four commands experiment, tune, compare and status (experiments and tunes also
attached to a live prover whose knobs were set by hand: its knobs after must be those before;
status also against a server that goes away mid-watch, whose exit 5 is status's own); stop
signals to real processes (dashboards in a pty, record, experiment, attach --raw, status
--watch: 3, the terminal put back, run_ended); values varied inside a recording's lists and
maps; clients that drip their request a byte at a time.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

import fuzz_adversarial  # noqa: E402
import fuzz_cases  # noqa: E402
import fuzz_trust  # noqa: E402
from fuzz_inputs import base_recording, mutate  # noqa: E402

DOCUMENTED = {0, 1, 2, 3}
BAD = ["-1", "0", "nan", "inf", "-inf", "1e999", "", "abc", "1e308", "99999999999999999999", "-0", "0x10",
       "/dev/full", "/dev/zero", "/nonexistent/x", "@FILE", "@FILE/sub", "@DIR", "@MISSING/x", " ", "a\x00b", "4.0"]
FAST = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05", "--sectors", "1", "--partitions", "2"]
RUN_OPTS = ["--gpus", "--workers-per-gpu", "--vram-budget", "--constraints-log2", "--modelled-log2", "--partitions",
            "--profile", "--seed", "--time-scale", "--verify-share", "--cache-dir", "--lock-mode", "--mem-sync",
            "--b-g2", "--config", "--backend"]


class Hang(Exception):
    pass


def _value(rng: random.Random, w: Path) -> str:
    v = rng.choice(BAD)
    return (v.replace("@FILE", str(w / "file")).replace("@DIR", str(w / "target"))
            .replace("@MISSING", str(w / "missing")))


def _toml(rng: random.Random, w: Path) -> str:
    p = w / "target" / "c.toml"
    keys = ["sectors", "gpus", "workers_per_gpu", "time_scale", "verify_share", "seed", "vram_budget", "junk",
            "partitions", "[faults]\noom_rate", "constraints_log2"]
    vals = ["-1", "1e999", "nan", '"x"', "[]", "{}", "2", "0.5", "true", '"24GiB"', "inf"]
    body = "\n".join(f"{rng.choice(keys)} = {rng.choice(vals)}" for _ in range(rng.randrange(1, 4)))
    p.write_bytes(rng.randbytes(rng.randrange(1, 60)) if rng.random() < 0.2 else body.encode())
    return str(p)


def _proof_dir(rng: random.Random, w: Path, good: Path) -> str:
    d = w / "target" / "proof"
    shutil.copytree(good, d)
    name = rng.choice(["proof.json", "verification_key.json", "public.json"])
    doc = json.loads((d / name).read_text())
    mode = rng.randrange(5)
    if mode == 0:
        (d / name).write_text("[" * rng.randrange(1000, 200000))
    elif mode == 1 and isinstance(doc, dict):
        doc.pop(rng.choice(list(doc)))
    elif mode == 2 and isinstance(doc, dict):
        doc[rng.choice(list(doc))] = rng.choice([0, "0", 4.0, True, None, [], ["0", "1", "0"], "01", -1, 1e999])
    elif mode == 3:
        raw = bytearray((d / name).read_bytes())
        for _ in range(rng.randrange(1, 6)):
            raw[rng.randrange(len(raw))] = rng.choice(b'0123456789",[]{}x ')
        (d / name).write_bytes(bytes(raw))
    else:
        (d / name).unlink()
    if mode < 3 and mode:
        (d / name).write_text(json.dumps(doc))
    return str(d)


def _recording(rng: random.Random, w: Path, good: bytes) -> str:
    p = w / "target" / "r.jsonl"
    data = mutate(rng, good, rng.randrange(4))
    if rng.random() < 0.3:  # claims the reader must not trust
        lines = data.splitlines(keepends=True)
        i = rng.randrange(1, max(2, len(lines)))
        lines.insert(i, rng.choice([
            b'{"kind":"run_started","t":0,"backend":"sim","simulated":true,"profile":"p","proved_log2":8,'
            b'"modelled_log2":27,"gpus":1000000000}\n',
            b'{"kind":"note","t":1e999,"text":"x"}\n', b'{"kind":"note","t":-1,"text":"x"}\n',
            b'{"kind":"gpu_info","t":0,"gpu":99999999,"name":"x","total_bytes":1,"budget_bytes":1,"simulated":true}\n']))
        data = b"".join(lines)
    p.write_bytes(data)
    return str(p)


def case(cmd: str, rng: random.Random, w: Path, good_proof: Path, good_rec: bytes) -> list[str]:
    t = w / "target"
    if cmd == "prove":
        args = ["prove", "--constraints-log2", "8", "--out", str(t / "out"), "--cache-dir", str(t / "keys")]
        opts = ["--constraints-log2", "--seed", "--instance", "--out", "--cache-dir"]
    elif cmd == "verify":
        return ["verify", _proof_dir(rng, w, good_proof) if rng.random() < 0.85 else _value(rng, w)]
    elif cmd == "record":
        args = ["record", "--out", str(t / "r.jsonl"), *FAST, "-q"]
        opts = RUN_OPTS + ["--out", "--duration", "--drain-timeout", "--switch", "--sectors"]
    elif cmd == "summary":
        return ["summary", _recording(rng, w, good_rec) if rng.random() < 0.8 else _value(rng, w)] + \
            (["--json"] if rng.random() < 0.5 else [])
    elif cmd == "screenshot":
        args = ["screenshot", _recording(rng, w, good_rec), "--at", "1", "-o", str(t / "s.svg")]
        opts = ["--at", "--size", "--theme", "-o"]
    elif cmd == "replay":
        args = ["replay", _recording(rng, w, good_rec)]
        opts = ["--speed", "--at", "--fps", "--theme"]
    else:  # run
        args = ["run", "--backend", "sim"]
        opts = RUN_OPTS + ["--theme", "--fps"]
    for _ in range(rng.randrange(1, 3)):
        opt = rng.choice(opts)
        if opt == "--config":
            val = _toml(rng, w) if rng.random() < 0.8 else _value(rng, w)
        elif opt == "--switch":
            val = f"{_value(rng, w)}:{rng.choice(['pause', 'single', 'mem_sync=stream', 'x', 'workers_per_gpu=0'])}"
        else:
            val = _value(rng, w)
        if opt in ("--duration",) and "--sectors" in args:
            i = args.index("--sectors")
            del args[i:i + 2]
        args += [opt, val]
    return args


CLASSIC = ["prove", "verify", "record", "summary", "screenshot", "replay", "run"]
EXTRA = ["export", "config", "attach", "serve", "metrics", "writers", "crafted", "stdout",
         "attach_probe", "metrics_probe", "serve_probe"]
COMMANDS = CLASSIC + EXTRA + fuzz_trust.CLASSES + fuzz_adversarial.CLASSES  # issue 35's, issue 44's
MEMORY_MB = 1024  # no process of the fuzz may pass this (the fuzz's own, in-process cases included)


def make_case(cmd: str, rng: random.Random, w: Path, good_proof: Path, good_rec: bytes) -> dict:
    """One case of class `cmd` (fuzz_cases' docstring says the shape)."""
    if cmd in CLASSIC:
        return {"kind": "cli", "cmd": cmd, "args": case(cmd, rng, w, good_proof, good_rec), "expect": None}
    rec = w / "target" / "good.jsonl"
    rec.write_bytes(good_rec)
    if cmd == "writers":
        return fuzz_cases.writer_case(rng, w, str(rec))
    if cmd == "crafted":
        bad = fuzz_cases.crafted_recording(rng, w / "target")
        sub = rng.choice([["summary", bad], ["summary", "--json", bad], ["replay", bad], ["export", bad, "-o",
                          str(w / "target" / "o.json")], ["screenshot", bad, "--at", "0", "-o", str(w / "target" / "s.svg")]])
        # a damaged recording is 2 everywhere, replay included (issue 35: --allow-damaged to see its prefix)
        return {"kind": "cli", "cmd": cmd, "args": sub, "expect": 2}
    if cmd == "inputs":
        return fuzz_trust.inputs_case(rng, w, good_proof, str(rec))
    if cmd == "typed":
        return fuzz_trust.typed_case(rng, w)
    if cmd == "linear":
        return fuzz_trust.linear_case(rng, w)
    if cmd == "strict_toml":
        return fuzz_trust.strict_toml_case(rng, w)
    if cmd == "names":
        return fuzz_trust.names_case(rng, w)
    if cmd == "stdout":
        return fuzz_cases.stdout_case(rng, str(rec))
    if cmd in fuzz_adversarial.CLASSES:
        return fuzz_adversarial.make(cmd, rng, w, str(rec), fuzz_cases.busy_port())
    if cmd.endswith("_probe"):
        return {"kind": "probe", "cmd": cmd, "args": [cmd], "expect": 0}
    return fuzz_cases.option_case(cmd, rng, w, str(rec), _value)


def run_any(c: dict, w: Path, box_s: float, rng: random.Random | None = None) -> dict:
    if c["kind"] == "sub":
        return fuzz_cases.run_sub(c, w, box_s)
    if c["kind"] == "probe":
        return fuzz_cases.run_probe(c["cmd"], rng or random.Random(0), w)
    if c["kind"] == "adv":
        return fuzz_adversarial.run_adv(c, w, box_s, run_case)
    return run_case(c["args"], w, box_s) | {"expect": c["expect"]}


@contextlib.contextmanager
def no_screen() -> Any:
    """DashboardApp.run as a no-op for one case, and back after it: a patch that outlived the
    case once broke every snapshot test that ran after the fuzz in the same process (issue 35)."""
    from c2tui.dashboard.app import DashboardApp

    real = DashboardApp.__dict__.get("run")
    DashboardApp.run = lambda self, *a, **k: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        if real is None:
            del DashboardApp.run
        else:
            DashboardApp.run = real  # type: ignore[method-assign]


def _recording_alive(args: list[str], w: Path, within_s: float = 2.0) -> bool:
    """A `record` cut by the time box whose recording was still being written (the writer flushes
    every 0.1 s and VRAM is sampled every 0.15 s): a run asked to be long (--sectors 10^20, a
    modelled 2^27 at time scale 4), not a hang."""
    if not args or args[0] != "record":
        return False
    outs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--out", "-o")]
    path = (w / outs[-1]) if outs else None
    try:
        return path is not None and time.time() - path.stat().st_mtime <= within_s
    except OSError:
        return False


def run_case(args: list[str], w: Path, box_s: float) -> dict:
    from click.testing import CliRunner

    from c2tui.commands import main

    before = {p for p in w.rglob("*") if "target" not in p.relative_to(w).parts}

    def alarm(signum: int, frame: object) -> None:
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, box_s)
    t0 = time.perf_counter()
    cwd = os.getcwd()
    os.chdir(w)
    try:
        with no_screen():
            res = CliRunner().invoke(main, args, env={"HOME": str(w / "home"), "C2TUI_CACHE": str(w / "target" / "keys")})
    except Hang:
        res = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(cwd)
    out = {"args": args, "seconds": round(time.perf_counter() - t0, 2)}
    if res is None or isinstance(res.exception, Hang):
        return out | {"hang": True, "alive": _recording_alive(args, w)}
    exc = res.exception
    tb = exc is not None and not isinstance(exc, SystemExit)
    text = res.output
    lines = [ln for ln in text.splitlines() if ln.strip()]
    named = [(w / a).resolve() for a in args if a and "\x00" not in a]  # a path the user names is a target
    stray = sorted(str(p) for p in w.rglob("*") if "target" not in p.relative_to(w).parts and p not in before
                   and not any(p.resolve() == n or n in p.resolve().parents or p.resolve() in n.parents for n in named))
    out |= {"code": res.exit_code, "traceback": bool(tb or "Traceback" in text),
            "exc": f"{type(exc).__name__}: {exc}"[:300] if tb else None,
            "last_line": lines[-1][:300] if lines else "", "stray": stray}
    return out


def peak_rss_mb() -> float:
    """The highest resident size of this process or any child it waited for, in MB (Linux: KiB)."""
    import resource

    return max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024


def judge(res: dict) -> list[str]:
    """What is wrong with one case's outcome (empty: nothing)."""
    if res.get("hang"):
        return [] if res.get("alive") else ["hang"]
    bad = ["memory"] if res.get("over_memory") else []
    if res["traceback"]:
        bad.append("traceback")
    documented = DOCUMENTED | ({4, 5} if (res.get("args") or [""])[0] == "status" else set())  # status's own
    if res["code"] not in documented:
        bad.append("exit")
    elif res.get("expect") is not None and res["code"] != res["expect"]:
        bad.append("wrong_exit")
    if res["code"] != 0 and not res["last_line"]:
        bad.append("silent")
    if res["stray"]:
        bad.append("stray")
    return bad


def fixtures(base: Path) -> tuple[Path, bytes]:
    """A good proof directory and a good recording to mutate."""
    from click.testing import CliRunner

    from c2tui.commands import main

    good_rec = base_recording(base / "good.jsonl")
    good_proof = base / "proof"
    r = CliRunner().invoke(main, ["prove", "--constraints-log2", "8", "--out", str(good_proof),
                                  "--cache-dir", str(base / "keys")])
    assert r.exit_code == 0, r.output
    return good_proof, good_rec


def fuzz(seconds: float, seed: int, box_s: float = 20.0, commands: list[str] | None = None,
         on_case: Callable[[dict], None] | None = None, cases: int | None = None) -> dict:
    """Round-robin over the subcommands until `seconds` have passed; per-command counts."""
    rng = random.Random(seed)
    cmds = commands or COMMANDS
    stats = {c: {"cases": 0, "exit_codes": {}, "tracebacks": 0, "hangs": 0, "undocumented_exit": 0, "wrong_exit": 0,
                 "no_error_line": 0, "stray_writes": 0, "over_memory": 0, "cut_alive": 0, "peak_rss_mb": 0.0,
                 "failures": []} for c in cmds}
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        good_proof, good_rec = fixtures(base)
        t_end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < t_end and (cases is None or i < cases):
            cmd = cmds[i % len(cmds)]
            w = base / f"w{i}"
            (w / "target").mkdir(parents=True)
            (w / "home").mkdir()
            (w / "file").write_text("x")
            before = peak_rss_mb()
            res = run_any(make_case(cmd, rng, w, good_proof, good_rec), w, box_s, rng)
            res["peak_rss_mb"] = peak_rss_mb()
            res["over_memory"] = res["peak_rss_mb"] > MEMORY_MB >= before  # this case took it over
            s = stats[cmd]
            s["peak_rss_mb"] = max(s["peak_rss_mb"], res["peak_rss_mb"])
            s["cases"] += 1
            s["cut_alive"] += bool(res.get("hang") and res.get("alive"))
            if not res.get("hang"):
                s["exit_codes"][str(res["code"])] = s["exit_codes"].get(str(res["code"]), 0) + 1
            bad = judge(res)
            for why, key in (("hang", "hangs"), ("traceback", "tracebacks"), ("exit", "undocumented_exit"),
                             ("wrong_exit", "wrong_exit"), ("silent", "no_error_line"), ("stray", "stray_writes"),
                             ("memory", "over_memory")):
                s[key] += why in bad
            if bad:
                s["failures"].append(res | {"why": bad})
            if on_case is not None:
                on_case(res)
            shutil.rmtree(w, ignore_errors=True)
            i += 1
    return stats


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=45)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=None, help="stop after this many cases (else after --seconds)")
    ap.add_argument("--only", default=None, help="comma list of case classes (default: all)")
    ap.add_argument("--out")
    args = ap.parse_args()
    t0 = time.perf_counter()
    only = args.only.split(",") if args.only else None
    stats = fuzz(args.seconds, args.seed, commands=only, cases=args.cases)
    doc = {"seed": args.seed, "seconds": round(time.perf_counter() - t0, 1), "argv": sys.argv[1:],
           "cases": sum(s["cases"] for s in stats.values()), "commands": stats}
    print(json.dumps({c: {k: v for k, v in s.items() if k != "failures"} | {"failures": len(s["failures"])}
                      for c, s in stats.items()}, indent=1))
    for s in stats.values():
        for f in s["failures"][:3]:
            print(json.dumps(f)[:600])
    if args.out:
        Path(args.out).write_text(json.dumps(doc, indent=1))
    sys.exit(1 if any(s["failures"] for s in stats.values()) else 0)


if __name__ == "__main__":
    main()
