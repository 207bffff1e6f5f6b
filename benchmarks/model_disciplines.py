"""The disciplines on the simulated device (MODELLED: profile rtx5070ti-16g, 2^27 partitions,
the seed's phase times), no GPU, no real math (NullPhases): what each one should do before
anything is measured natively.

    python benchmarks/model_disciplines.py [--time-scale 0.1] [--partitions 30] [--workers 3]

Prints a markdown table: modelled partitions/min, fallbacks, compute held (steady), mean
compute and mem hold (modelled s), per budget (card = 16 GiB: one 12 GiB pre-stage fits;
two-prestage = 24 GiB) and discipline.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover.config import load_config  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.pipeline.nullphases import NullPhases  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402

RUNS = (("single", "stream", "gpu"), ("narrow", "stream", "gpu"), ("two-lock", "device", "gpu"),
        ("two-lock", "stream", "gpu"), ("reserved", "stream", "gpu"), ("two-lock", "stream", "cpu"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time-scale", type=float, default=0.1)
    ap.add_argument("--partitions", type=int, default=30)
    ap.add_argument("--workers", type=int, default=3)
    a = ap.parse_args(argv)
    print("| MODELLED rtx5070ti-16g 2^27 | discipline | partitions/min | fallbacks | compute held | compute hold s | mem hold s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for budget in ("card", "two-prestage"):
        for mode, mem_sync, b_g2 in RUNS:
            cfg = load_config(None, backend="sim", workers_per_gpu=a.workers, vram_budget=budget, lock_mode=mode,
                              mem_sync=mem_sync, b_g2=b_g2, sectors=1, partitions=a.partitions,
                              time_scale=a.time_scale, constraints_log2=8)
            events: list = []
            eng = Engine(cfg, [events.append], phases=NullPhases())
            eng.start()
            eng.wait(3600)
            sm = summarize(fold(events))
            g = sm.gpus[0]
            print(f"| {budget} | {mode} {mem_sync if mode == 'two-lock' else ''} b_g2={b_g2} | "
                  f"{sm.modelled_throughput_per_min:.1f} | {sm.fallbacks} | {g.steady_held_share or 0:.0%} | "
                  f"{g.compute.hold_mean / a.time_scale:.2f} | {g.mem.hold_mean / a.time_scale:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
