"""The lock disciplines' RESULTS table and decomposition, from recordings alone (no GPU):

    python benchmarks/disciplines_table.py benchmarks/recordings/h200/disciplines/*.jsonl.gz

Recordings are named n<log2>_<run>_<budget>.jsonl[.gz] (bench_disciplines.py writes them);
every figure is the one fold's summary (`c2tui summary FILE --json`): verified partitions/min
in the steady window (first to last verified), the compute lock's held share and the mean
NVML utilisation between the first compute acquire and the last release, fallbacks, OOMs,
mean mem / compute hold, proofs verified / failed. The decomposition: narrow against single
(what narrowing the lock buys), two-lock + stream against narrow (what the second lock buys),
reserved against two-lock + stream, per size and budget.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover.device.budget import gib  # noqa: E402
from prover.record import read_recording  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402

_NAME = re.compile(r"^n(\d+)_(.+)_(card|tight)$")
LABELS = {"single": "single", "narrow": "narrow", "stream": "two-lock + stream", "device": "two-lock + device",
          "reserved": "reserved", "stream_cpu": "two-lock + stream, b_g2 cpu",
          "single_cpu": "single, b_g2 cpu (~cuzk)", "narrow_cpu": "narrow, b_g2 cpu"}
# (numerator, denominator, what the ratio says)
STEPS = (("narrow", "single", "narrowing the lock (narrow / single)"),
         ("stream", "narrow", "the second lock (two-lock + stream / narrow)"),
         ("reserved", "stream", "reserved slots (reserved / two-lock + stream)"),
         ("narrow_cpu", "single_cpu", "narrowing, b_g2 on cpu (narrow / single)"),
         ("stream_cpu", "stream", "b_g2 off the compute lock (two-lock + stream, cpu / gpu b_g2)"))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def load(paths: list[Path]) -> list[dict[str, Any]]:
    out = []
    for p in paths:
        stem = p.name.removesuffix(".gz").removesuffix(".jsonl")
        m = _NAME.match(stem)
        if not m:
            continue
        rec = read_recording(p)
        sm = summarize(fold(rec.events))
        out.append({"log2": int(m.group(1)), "run": m.group(2), "budget": m.group(3), "sm": sm, "file": p.name})
    return sorted(out, key=lambda r: (r["log2"], r["budget"], list(LABELS).index(r["run"]) if r["run"] in LABELS else 99))


def table(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| size | budget | discipline | verified/min (steady) | compute held | NVML util | fallbacks | OOMs | "
           "mem hold ms | compute hold ms | proofs ok/failed | recording |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        sm = r["sm"]
        g = sm.gpus[0] if sm.gpus else None
        kind = "SIMULATED " if sm.simulated else ""
        out.append(
            f"| {kind}2^{r['log2']} | {r['budget']} {gib(g.budget) if g else '?'} | {LABELS.get(r['run'], r['run'])} | "
            f"{sm.steady_throughput_per_min:.1f} | {_pct(g.steady_held_share if g else None)} | "
            f"{_pct(g.steady_util_mean if g else None)} | {sm.fallbacks} | {sm.ooms} | "
            f"{g.mem.hold_mean * 1e3 if g else 0:.1f} | {g.compute.hold_mean * 1e3 if g else 0:.1f} | "
            f"{sm.proofs_ok}/{sm.proofs_failed} | {r['file']} |")
    return out


def decomposition(rows: list[dict[str, Any]]) -> list[str]:
    rate = {(r["log2"], r["budget"], r["run"]): r["sm"].steady_throughput_per_min for r in rows}
    cells = sorted({(r["log2"], r["budget"]) for r in rows})
    out = ["| step | " + " | ".join(f"2^{n} {b}" for n, b in cells) + " |", "| --- |" + " --- |" * len(cells)]
    for num, den, what in STEPS:
        vals = []
        for n, b in cells:
            x, y = rate.get((n, b, num)), rate.get((n, b, den))
            vals.append("-" if not x or not y else f"{x / y:.2f}x ({x:.0f} / {y:.0f})")
        if any(v != "-" for v in vals):
            out.append(f"| {what} | " + " | ".join(vals) + " |")
    return out


def report(paths: list[Path]) -> str:
    rows = load([Path(p) for p in paths])
    if not rows:
        return "no recordings named n<log2>_<run>_<budget>.jsonl[.gz]"
    dev = next((r["sm"].gpus[0].name for r in rows if r["sm"].gpus), "?")
    head = f"Lock disciplines, profile native, one GPU ({dev}), verified partitions/min in the steady window:"
    return "\n".join([head, "", *table(rows), "", "Decomposition (ratio of steady verified/min):", "",
                      *decomposition(rows)])


if __name__ == "__main__":
    print(report([Path(p) for p in sys.argv[1:]]))
