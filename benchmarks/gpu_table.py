"""The issue-6 table, computed from committed recordings (no GPU needed).

    python benchmarks/gpu_table.py benchmarks/recordings/h200/*.jsonl

Every figure is `c2tui summary FILE --json`'s (the one fold), per recording and GPU:
throughput (steady window, wall and modelled partitions/min), GPU busy four ways, mem-lock
figures, compute hold, fallbacks, OOMs, proofs. GPU busy: `held` = share of the run with
the compute lock held (lock events); `util` = mean utilisation of the run's VramSample
events (NVML on a real GPU, modelled on a SimDevice); `steady held` and `steady util` = the
same between the first compute acquire and the last compute release (start-up and drain
left out).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover.record import read_recording  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402


def pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def rows(paths: list[str]) -> list[str]:
    out = ["| recording | gpu | mode | workers | budget GiB | part./min wall | part./min modelled | busy held | util | steady held | steady util | mem wait s | mem section s | compute hold s | fallbacks | OOMs | proofs ok/failed |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in paths:
        rec = read_recording(p)
        s = summarize(fold(rec.events))
        k = s.knobs
        for g in s.gpus:
            out.append(
                f"| {Path(p).stem} | {g.gpu} | {k.get('lock_mode')} {k.get('mem_sync')} | {k.get('workers_per_gpu')} | "
                f"{g.budget / 2**30:.0f} | {s.steady_throughput_per_min:.1f} | {s.modelled_throughput_per_min:.1f} | "
                f"{pct(g.compute_held_share)} | {pct(g.util_mean)} | {pct(g.steady_held_share)} | "
                f"{pct(g.steady_util_mean)} | {g.mem.wait_mean:.3f} | "
                f"{g.mem.section_mean:.3f} | {g.compute.hold_mean:.3f} | {g.fallbacks} | {g.ooms} | "
                f"{s.proofs_ok}/{s.proofs_failed} |")
    return out


if __name__ == "__main__":
    print("\n".join(rows(sys.argv[1:])))
