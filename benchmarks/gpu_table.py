"""The issue-6 table, computed from committed recordings (no GPU needed).

    python benchmarks/gpu_table.py benchmarks/recordings/h200/*.jsonl

Per recording and GPU: throughput (steady window, wall and modelled partitions/min, both
from `c2tui summary`), GPU busy three ways, mem-lock figures, compute hold, fallbacks, OOMs,
proofs. GPU busy: `held` = share of the run with a compute section running (lock events);
`steady` = the same share between the first compute acquire and the last release (no
start-up or drain); `nvml` = mean NVML utilisation of the VramSample events in the middle
70% of the run (real on a CudaDevice with NVML, modelled on a SimDevice).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prover.record import read_recording  # noqa: E402
from prover.state import fold  # noqa: E402
from prover.summary import summarize  # noqa: E402


def busy(events: list, gpu: int) -> tuple[float, float, float | None]:
    holds, t0 = [], None
    for e in events:
        if getattr(e, "gpu", None) != gpu or e.kind not in ("lock_acquired", "lock_released") or e.lock != "compute":
            continue
        if e.kind == "lock_acquired":
            t0 = e.t
        elif t0 is not None:
            holds.append((t0, e.t))
            t0 = None
    T = max(e.t for e in events)
    held = sum(b - a for a, b in holds)
    span = holds[-1][1] - holds[0][0] if holds else 0.0
    utils = [e.util for e in events if e.kind == "vram_sample" and e.gpu == gpu and e.util is not None
             and 0.15 * T < e.t < 0.85 * T]
    return held / T if T else 0.0, held / span if span else 0.0, (sum(utils) / len(utils) if utils else None)


def rows(paths: list[str]) -> list[str]:
    out = ["| recording | gpu | mode | workers | budget GiB | part./min wall | part./min modelled | busy held | busy steady | busy NVML | mem wait s | mem section s | compute hold s | fallbacks | OOMs | proofs ok/failed |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in paths:
        rec = read_recording(p)
        s = summarize(fold(rec.events))
        k = s.knobs
        for g in s.gpus:
            held, steady, nvml = busy(rec.events, g.gpu)
            out.append(
                f"| {Path(p).stem} | {g.gpu} | {k.get('lock_mode')} {k.get('mem_sync')} | {k.get('workers_per_gpu')} | "
                f"{g.budget / 2**30:.0f} | {s.steady_throughput_per_min:.1f} | {s.modelled_throughput_per_min:.1f} | "
                f"{held:.0%} | {steady:.0%} | {'-' if nvml is None else f'{nvml:.0%}'} | {g.mem.wait_mean:.3f} | "
                f"{g.mem.section_mean:.3f} | {g.compute.hold_mean:.3f} | {g.fallbacks} | {g.ooms} | "
                f"{s.proofs_ok}/{s.proofs_failed} |")
    return out


if __name__ == "__main__":
    print("\n".join(rows(sys.argv[1:])))
