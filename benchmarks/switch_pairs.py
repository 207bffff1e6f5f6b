"""Every ordered pair of lock disciplines and device <-> stream, live, in ONE `c2tui record` run
(issue 33): 0 OOM events, every proof verified, each pair exercised; per segment the knobs,
proofs and rate, and each switch's settle time (ModeChange -> SwitchSettled).

    python3 benchmarks/switch_pairs.py --out-dir DIR                       # sim: rtx5070ti-16g, card budget
    python3 benchmarks/switch_pairs.py --backend cuda --constraints-log2 22 --workers-per-gpu 8 \\
        --vram-budget two-prestage --out-dir "$OUT"                       # native, ~4 min on one H200

The five states single, narrow, two-lock + device, two-lock + stream and reserved, visited along
an Euler circuit of their complete directed graph: 20 switches, each ordered pair once (so every
pair of disciplines, two-lock both ways, and device <-> stream under two-lock). The record runs
with `--listen`; the switches go over attach (the operator's `attach --send` path, source
`attach:switch-pairs`) once the first proof has verified, `--segment-s` apart, because
`--switch AT` counts from the engine's start and a fresh GPU machine's start-up (numba, CUDA
kernels, key set-up) varies by a minute. After the last segment the run is stopped with SIGINT
(a clean stop: exit 3, run_ended "interrupted", in-flight partitions abandoned and recorded).

Writes DIR/switch_pairs_<tag>.jsonl.gz (replay, summary, compare read it) and
DIR/switch_pairs_<tag>.json (config, the schedule, `summary --json`'s segments, the checks, the
settle times), then prints the table. Exit 0 when every check passes. A check is a function
of (events, summary) returning problems; every one in CHECKS is enforced (the fold side's
per_min_ci and attribution included, issue 33).

    python3 benchmarks/switch_pairs.py --check RECORDING [--json OUT]

re-derives the checks and the table from a committed recording (no run): e.g. the native H200
one, benchmarks/recordings/h200/switch/switch_pairs_cuda_22.jsonl.gz. Exit 0 when all pass.
"""
from __future__ import annotations

import argparse
import gzip
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prover.record import read_recording  # noqa: E402

STATES: list[tuple[str, str | None]] = [("two-lock", "device"), ("two-lock", "stream"), ("single", None),
                                        ("narrow", None), ("reserved", None)]
SOURCE = "switch-pairs"


def euler_circuit(n: int) -> list[int]:
    """Nodes 0..n-1 of the complete directed graph, each edge (ordered pair) once (Hierholzer)."""
    left = {u: [v for v in range(n) if v != u] for u in range(n)}
    stack, out = [0], []
    while stack:
        u = stack[-1]
        if left[u]:
            stack.append(left[u].pop())
        else:
            out.append(stack.pop())
    return out[::-1]


def specs(cur: tuple[str, str], to: tuple[str, str | None]) -> list[str]:
    """The switches from the knobs in force to a state: mem_sync first (two-lock states only), then lock_mode."""
    out = []
    if to[1] is not None and cur[1] != to[1]:
        out.append(f"mem_sync={to[1]}")
    if cur[0] != to[0]:
        out.append(to[0])
    return out


def name(st: tuple[str, str | None]) -> str:
    return st[0] if st[1] is None else f"{st[0]}+{st[1]}"


# --- the run ----------------------------------------------------------------------------------------
def record_cmd(a: argparse.Namespace, out: Path, sock: Path) -> list[str]:
    cmd = [sys.executable, "-m", "c2tui", "record", "-q", "--out", str(out), "--listen", str(sock),
           "--backend", a.backend, "--profile", a.profile, "--constraints-log2", str(a.constraints_log2),
           "--workers-per-gpu", str(a.workers_per_gpu), "--vram-budget", a.vram_budget, "--lock-mode", "two-lock",
           "--mem-sync", "device", "--time-scale", str(a.time_scale), "--seed", str(a.seed), "--force"]
    return cmd + (["--cache-dir", str(a.cache_dir)] if a.cache_dir else [])


def first_proof(out: Path, proc: subprocess.Popen, timeout: float) -> float:
    """Seconds until the recording holds a verified proof (start-up included)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"c2tui record ended before its first proof (exit {proc.returncode}): "
                             f"{proc.stderr.read() if proc.stderr else ''}")
        if out.exists() and '"ok":true,"checked":true' in out.read_text(errors="replace"):
            return time.monotonic() - t0
        time.sleep(0.2)
    raise SystemExit(f"no proof verified within {timeout:.0f}s")


def drive(a: argparse.Namespace, sock: Path, order: list[int], progress: Callable[[dict], None]) -> list[dict]:
    """The schedule over attach: a segment in the first state, then one per switch. A client the
    server dropped (slow, on a loaded machine) is connected again once, not the run lost."""
    from prover.attach.client import AttachClient, RemoteController

    def connect() -> tuple[Any, Any]:
        client = AttachClient(str(sock), name=SOURCE)
        client.connect()
        client.start(lambda e: None)
        return client, RemoteController(client)

    client, ctl = connect()
    cur, sent = ("two-lock", "device"), []
    try:
        time.sleep(a.segment_s)
        for i in order[1:]:
            to = STATES[i]
            todo = specs(cur, to)
            for spec in todo:
                try:
                    ctl.apply(spec)
                except Exception:  # noqa: BLE001 - detached: once more on a new connection
                    client.close()
                    client, ctl = connect()
                    ctl.apply(spec)
            cur = (to[0], to[1] or cur[1])
            sent.append({"to": name(to), "specs": todo, "wall": time.time()})
            progress({"sent": sent})
            time.sleep(a.segment_s)
    finally:
        client.close()
    return sent


# --- the checks ---------------------------------------------------------------------------------------
Check = Callable[[list, dict], list[str]]


def no_oom_events(events: list, sm: dict) -> list[str]:
    return [f"OOM t={e.t:.2f} {e.worker} {e.part} cause={getattr(e, 'cause', None)}" for e in events if e.kind == "oom"]


def every_proof_verified(events: list, sm: dict) -> list[str]:
    bad = [f"proof of {e.part} failed: {e.reason}" for e in events if e.kind == "proof_result" and not e.ok]
    return bad + ([f"{sm['partitions_failed']} partition(s) failed"] if sm["partitions_failed"] else [])


def every_pair_exercised(events: list, sm: dict) -> list[str]:
    """Each switch had a proof verified in the state before it and in the state after it."""
    changes = transitions(events)
    ok_t = [e.t for e in events if e.kind == "proof_result" and e.ok]
    bounds = [0.0, *(c["t"] for c in changes), float("inf")]
    empty = [i for i in range(len(bounds) - 1) if not any(bounds[i] <= t < bounds[i + 1] for t in ok_t)]
    return [f"no proof verified in state {i} ({changes[i - 1]['to'] if i else 'the first'})" for i in empty]


def per_min_ci_present(events: list, sm: dict) -> list[str]:
    """Every segment says its proofs, its rate and the rate's 95% interval."""
    return [f"segment {s['index']} has no {k}" for s in sm["segments"] for k in ("proofs", "per_min", "per_min_ci")
            if s.get(k) is None]


def no_device_sync_under_reserved_or_stream(events: list, sm: dict) -> list[str]:
    """Sections begun under reserved or mem_sync=stream never device-sync: the fold charges a
    section to the knobs it began under (a draining two-lock + device section's sync is the
    later segment's `transitional` figure, not its own)."""
    return [f"segment {s['index']} ({s['knobs'].get('lock_mode')}/{s['knobs'].get('mem_sync')}) has "
            f"{s['device_sync_s']:.2f}s of device sync" for s in sm["segments"]
            if (s["knobs"].get("lock_mode") == "reserved" or s["knobs"].get("mem_sync") == "stream")
            and s["device_sync_s"] > 0]


CHECKS: list[Check] = [no_oom_events, every_proof_verified, every_pair_exercised, per_min_ci_present,
                       no_device_sync_under_reserved_or_stream]


# --- reading the recording -----------------------------------------------------------------------------
def transitions(events: list) -> list[dict]:
    """The schedule's switches as recorded: ModeChanges from this script, a spec pair as one."""
    out: list[dict] = []
    for e in events:
        if e.kind == "mode_change" and e.source == f"attach:{SOURCE}":
            if out and e.t - out[-1]["t"] < 0.5:
                out[-1]["changes"].append(f"{e.knob}={e.new}")
            else:
                out.append({"t": e.t, "changes": [f"{e.knob}={e.new}"]})
    knobs = {"lock_mode": "two-lock", "mem_sync": "device"}
    for c in out:
        for ch in c["changes"]:
            k, _, v = ch.partition("=")
            knobs[k] = v
        c["to"] = knobs["lock_mode"] + ("+" + knobs["mem_sync"] if knobs["lock_mode"] == "two-lock" else "")
    return out


def settle_times(events: list, changes: list[dict]) -> list[dict]:
    """Per switch and GPU: seconds from the ModeChange to the GPU's SwitchSettled (the new regime
    alone on it), and what the first new section waited; None where no new regime began (e.g.
    single -> narrow is a new regime, a mem_sync change under single is not) or it never settled."""
    settled = [e for e in events if e.kind == "switch_settled"]
    gpus = sorted({e.gpu for e in events if e.kind == "gpu_info"})
    rows = []
    for i, c in enumerate(changes):
        end = changes[i + 1]["t"] if i + 1 < len(changes) else float("inf")
        for g in gpus:
            s = next((e for e in settled if e.gpu == g and c["t"] <= e.t < end), None)
            rows.append({"to": c["to"], "gpu": g, "settle_s": None if s is None else s.t - c["t"],
                         "waited_s": None if s is None else s.waited, "drained": None if s is None else s.drained})
    return rows


def summary_json(path: Path) -> dict:
    r = subprocess.run([sys.executable, "-m", "c2tui", "summary", "--json", str(path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 1):  # 1: a proof or partition failed, said in the JSON (what the checks read)
        raise SystemExit(f"c2tui summary failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def segment_rows(sm: dict) -> list[dict]:
    """summary --json's segments, the intermediate one of a two-knob switch (< 0.5 s) left out."""
    return [{"index": s["index"], "knobs": f"{s['knobs'].get('lock_mode')}/{s['knobs'].get('mem_sync')}",
             "t0": s["t0"], "duration_s": s["duration_s"], "verified": s["verified"],
             "verified_per_min": s["verified_per_min"], "mean_per_min": s["mean_per_min"],
             "per_min": s.get("per_min"), "per_min_ci": s.get("per_min_ci"), "fallbacks": s["fallbacks"],
             "ooms": s["ooms"], "device_sync_s": s["device_sync_s"],
             "transitional_sync_s": (s.get("transitional") or {}).get("device_sync_s", 0.0)}
            for s in sm["segments"] if s["duration_s"] >= 0.5]


def table(rows: list[dict], settle: list[dict]) -> str:
    lines = [f"{'#':>3} {'knobs':<18} {'s':>6} {'proofs':>6} {'/min':>8} {'95% interval':>15} {'fallbk':>6} "
             f"{'OOM':>4} {'dev sync s':>10} {'transit sync s':>14}"]
    for r in rows:
        rate = "-" if r["per_min"] is None else f"{r['per_min']:.1f}"
        ci = "-" if not r["per_min_ci"] else f"{r['per_min_ci'][0]:.0f}-{r['per_min_ci'][1]:.0f}"
        lines.append(f"{r['index']:>3} {r['knobs']:<18} {r['duration_s']:6.1f} {r['verified']:>6} {rate:>8} {ci:>15} "
                     f"{r['fallbacks']:>6} {r['ooms']:>4} {r['device_sync_s']:10.2f} {r['transitional_sync_s']:14.2f}")
    got = [s["settle_s"] for s in settle if s["settle_s"] is not None]
    if got:
        got.sort()
        lines.append(f"settle (ModeChange -> SwitchSettled) over {len(got)} switches x GPUs: median "
                     f"{got[len(got) // 2]:.2f}s, max {got[-1]:.2f}s")
    return "\n".join(lines)


# --- main ----------------------------------------------------------------------------------------------
def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="sim", choices=("sim", "cuda"))
    ap.add_argument("--profile", default=None, help="default: rtx5070ti-16g on sim, native on cuda")
    ap.add_argument("--constraints-log2", type=int, default=None, help="default: 10 on sim, 22 on cuda")
    ap.add_argument("--workers-per-gpu", type=int, default=3)
    ap.add_argument("--vram-budget", default="card", help="card (sim: 16 GiB, one pre-stage) | two-prestage | SIZE")
    ap.add_argument("--time-scale", type=float, default=None, help="default: 0.1 on sim, 1 on cuda")
    ap.add_argument("--segment-s", type=float, default=None, help="wall seconds in each state (default 5 sim, 6 cuda)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--startup-timeout", type=float, default=300.0)
    ap.add_argument("--cache-dir", type=Path, default=None, help="proving-key cache (default: the run's)")
    ap.add_argument("--tag", default=None, help="file name tag (default: <backend>_<log2>)")
    ap.add_argument("--out-dir", type=Path, default=None, help="where the run's files go (required without --check)")
    ap.add_argument("--check", type=Path, default=None, metavar="RECORDING",
                    help="no run: re-derive the checks from a recording this script made")
    ap.add_argument("--json", type=Path, default=None, help="with --check: write the result here too")
    a = ap.parse_args(argv)
    if a.check is None and a.out_dir is None:
        ap.error("--out-dir is required (or --check RECORDING)")
    cuda = a.backend == "cuda"
    a.profile = a.profile or ("native" if cuda else "rtx5070ti-16g")
    a.constraints_log2 = a.constraints_log2 or (22 if cuda else 10)
    a.time_scale = a.time_scale or (1.0 if cuda else 0.1)
    a.segment_s = a.segment_s or (6.0 if cuda else 5.0)
    a.tag = a.tag or f"{a.backend}_{a.constraints_log2}"
    return a


def check(path: Path, out: Path | None) -> int:
    """The checks and the table from a recording alone (exit 0: all pass, 1: a check failed,
    2: the recording cannot be read)."""
    try:
        rec = read_recording(path)
    except Exception as exc:  # noqa: BLE001 - one line naming what is wrong
        print(f"switch_pairs: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    sm = summary_json(path)
    changes = transitions(rec.events)
    rows, settle = segment_rows(sm), settle_times(rec.events, changes)
    problems = {c.__name__: c(rec.events, sm) for c in CHECKS}
    print(table(rows, settle))
    print(f"{'SIMULATED' if sm['simulated'] else 'native'} recording {path}: {len(changes)} switches, "
          f"{sum(1 for e in rec.events if e.kind == 'oom')} OOM events, {sm['proofs_ok']} proofs verified")
    for n, p in problems.items():
        print(f"{n}: {'ok' if not p else f'{len(p)} problem(s): ' + '; '.join(p[:4])}")
    if out is not None:
        out.write_text(json.dumps({"recording": str(path), "segments": rows, "settle": settle, "checks": problems,
                                   "passed": not any(problems.values())}, indent=1))
    return 0 if not any(problems.values()) else 1


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    if a.check is not None:
        return check(a.check, a.json)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    plain, result = a.out_dir / f"switch_pairs_{a.tag}.jsonl", a.out_dir / f"switch_pairs_{a.tag}.json"
    order = euler_circuit(len(STATES))
    report: dict[str, Any] = {"config": {k: str(v) for k, v in vars(a).items()}, "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                              "schedule": [name(STATES[i]) for i in order]}
    save = lambda extra: result.write_text(json.dumps({**report, **extra}, indent=1))  # noqa: E731
    sock = Path(tempfile.mkdtemp(prefix="c2sw")) / "run.sock"
    t_start = time.monotonic()
    proc = subprocess.Popen(record_cmd(a, plain, sock), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        report["startup_s"] = first_proof(plain, proc, a.startup_timeout)
        report["sent"] = drive(a, sock, order, save)
    except (Exception, SystemExit) as exc:  # said, and what was recorded is still read below
        report["error"] = f"{type(exc).__name__}: {exc}"
        print(f"switch_pairs: {report['error']}", file=sys.stderr)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # a clean stop: run_ended "interrupted", exit 3
        report["record_exit"] = proc.wait(timeout=120)
    report["wall_s"] = time.monotonic() - t_start
    if not plain.exists():
        save({})
        return 1
    with open(plain, "rb") as f, gzip.open(f"{plain}.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    plain.unlink()
    rec = read_recording(Path(f"{plain}.gz"))
    sm = summary_json(Path(f"{plain}.gz"))
    changes = transitions(rec.events)
    rows, settle = segment_rows(sm), settle_times(rec.events, changes)
    problems = {c.__name__: c(rec.events, sm) for c in CHECKS}
    report.update(recording=f"{plain}.gz", simulated=sm["simulated"], proofs_ok=sm["proofs_ok"],
                  proofs_failed=sm["proofs_failed"], ooms=sum(1 for e in rec.events if e.kind == "oom"),
                  fallbacks=sm["fallbacks"], switches=len(changes), segments=rows, settle=settle,
                  checks=problems, passed=not any(problems.values()) and "error" not in report)
    save({})
    print(table(rows, settle))
    print(f"{'SIMULATED' if sm['simulated'] else 'native'} {a.backend} 2^{a.constraints_log2} profile {a.profile}, "
          f"{a.workers_per_gpu} workers, budget {a.vram_budget}: {len(changes)} switches, {report['ooms']} OOM events, "
          f"{sm['proofs_ok']} proofs verified, {sm['proofs_failed']} failed, start-up {report.get('startup_s', -1):.1f}s, "
          f"wall {report['wall_s']:.0f}s")
    for n, p in problems.items():
        print(f"{n}: {'ok' if not p else f'{len(p)} problem(s): ' + '; '.join(p[:4])}")
    print(f"wrote {result} and {plain}.gz")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
