"""Fuzz the recording reader and the config loader at volume (issue 7): no crash, only the
clear error. Seeded, so a failure reproduces.

    python benchmarks/fuzz_inputs.py --cases 3000 --out benchmarks/results/fuzz.json

Recordings: (a) random bytes after a valid prefix, (b) random byte flips anywhere in a real
recording, (c) lines of valid JSON shaped like events with wrong, missing or extra fields,
(d) headers of other schema versions or no header, (e) values varied inside the lists and maps
of a run's events (benchmarks/fuzz_adversarial.py). Each read must return the valid prefix
and, when it stops early, an error naming the line; what it returns is folded and summarised. Configs: random override dicts and
random TOML text; each must give a RunConfig or a ConfigError.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover import events as ev  # noqa: E402
from prover.config import ConfigError, RunConfig, load_config  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter, read_recording  # noqa: E402

KINDS = [m.model_fields["kind"].default for m in ev.Event.__args__[0].__args__]  # type: ignore[attr-defined]
VALUES = [None, 0, -1, 1.5, 2**70, "", "x", "mem", "synthesis", True, [], {}, float("inf")]


def base_recording(path: Path) -> bytes:
    with RecordingWriter(path, RecordingHeader()) as w:
        w.write(ev.RunStarted(t=0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=27, gpus=1))
        for i in range(20):
            w.write(ev.LockAcquired(t=0.1 * i, gpu=0, lock="mem", worker="g0w0", part=f"s0p{i}", wait=0.01))
            w.write(ev.PhaseEnd(t=0.1 * i + 0.05, part=f"s0p{i}", phase=ev.Phase.msm, worker="g0w0", gpu=0, duration=0.05))
    return path.read_bytes()


def check_recording(path: Path, data: bytes, stats: dict) -> None:
    path.write_bytes(data)
    try:
        rec = read_recording(path)
    except Exception as exc:  # only an unreadable file may raise, and then as RecordingError
        if type(exc).__name__ != "RecordingError":
            stats["crashes"].append(f"{type(exc).__name__}: {exc}"[:200])
        else:
            stats["clean_errors"] += 1
        return
    if rec.error is not None:
        stats["clean_errors"] += 1
        if rec.bad_line is None and rec.header is not None:
            stats["crashes"].append(f"error without a line: {rec.error}"[:200])
    else:
        stats["accepted"] += 1
    try:  # what the reader took, the fold and the summary take too (issue 44: they once assumed more)
        from prover.fold.apply import fold
        from prover.fold.summary import summarize

        summarize(fold(rec.events))
    except Exception as exc:  # noqa: BLE001 - counted, with its words
        stats["crashes"].append(f"fold/summary: {type(exc).__name__}: {exc}"[:200])


def mutate(rng: random.Random, good: bytes, mode: int) -> bytes:
    lines = good.splitlines(keepends=True)
    if mode == 0:
        return b"".join(lines[: rng.randrange(1, len(lines))]) + rng.randbytes(rng.randrange(1, 300))
    if mode == 1:
        b = bytearray(good)
        for _ in range(rng.randrange(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if mode == 2:
        obj = {"kind": rng.choice(KINDS + ["nope"]), "t": rng.choice(VALUES)}
        for _ in range(rng.randrange(0, 6)):
            obj[rng.choice(["gpu", "lock", "worker", "part", "wait", "phase", "duration", "bytes", "zz"])] = rng.choice(VALUES)
        i = rng.randrange(1, len(lines))
        return b"".join(lines[:i]) + json.dumps(obj).encode() + b"\n" + b"".join(lines[i:])
    header = json.loads(lines[0])
    header["schema_version"] = rng.choice([0, 3, 99, "1", None])
    return (json.dumps(header).encode() + b"\n" if rng.random() < 0.8 else b"") + b"".join(lines[1:])


def fuzz_config(rng: random.Random, n: int, stats: dict, tmp: Path) -> None:
    fields = list(RunConfig.model_fields) + ["junk"]
    for i in range(n):
        try:
            if i % 2:
                load_config(None, **{rng.choice(fields): rng.choice(VALUES + ["24GiB", "two-lock", "x,y", "-3"])
                                     for _ in range(rng.randrange(1, 5))})
            else:
                p = tmp / "c.toml"
                p.write_bytes(rng.randbytes(rng.randrange(0, 80)) if rng.random() < 0.3 else
                              "\n".join(f"{rng.choice(fields)} = {json.dumps(rng.choice(VALUES[:10]))}"
                                        for _ in range(rng.randrange(1, 5))).encode())
                load_config(p)
            stats["accepted"] += 1
        except ConfigError:
            stats["clean_errors"] += 1
        except Exception as exc:
            stats["crashes"].append(f"{type(exc).__name__}: {exc}"[:200])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out: dict = {"seed": args.seed, "cases_per_kind": args.cases}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        good = base_recording(tmp / "good.jsonl")
        rec = {"accepted": 0, "clean_errors": 0, "crashes": []}
        from fuzz_adversarial import inside_recording  # issue 44: values inside lists and maps

        for i in range(args.cases):
            data = mutate(rng, good, i % 5) if i % 5 < 4 else Path(inside_recording(rng, tmp)).read_bytes()
            check_recording(tmp / "f.jsonl", data, rec)
        cfg = {"accepted": 0, "clean_errors": 0, "crashes": []}
        fuzz_config(rng, args.cases, cfg, tmp)
    out["recordings"], out["configs"] = rec, cfg
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps({k: (len(v["crashes"]) if isinstance(v, dict) else v) for k, v in out.items()}))
    print(json.dumps(out)[:2000])
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    sys.exit(1 if rec["crashes"] or cfg["crashes"] else 0)


if __name__ == "__main__":
    main()
