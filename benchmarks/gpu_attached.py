"""The dashboard attached vs headless record, side by side in one process, on any backend.

    python benchmarks/gpu_attached.py --seconds 20 --reps 2 --out FILE.json -- backend=cuda profile=rtx5070ti-16g ...

Reuses bench_tui's ABBA runner (the app headless under Textual's pilot at 200x60, painting at
10 Hz, against the engine with only a RecordingWriter sink); the engine's config comes from
the KEY=VALUE pairs after `--` (RunConfig fields; values parsed as JSON where they parse).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

import bench_tui as bt  # noqa: E402


def _overrides(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--out", required=True)
    ap.add_argument("config", nargs="*", help="RunConfig KEY=VALUE pairs")
    args = ap.parse_args()
    overrides = _overrides(args.config)

    from bench_native import MemoPhases  # one circuit and key for every run (a native 2^22 setup is ~1 min)

    memo = MemoPhases()

    def engine(ts: float):
        from prover.config import load_config
        from prover.pipeline.engine import Engine

        return Engine(load_config(None, **{**overrides, "time_scale": ts}), phases=memo)

    bt._engine = engine
    res = bt._throughput(args.seconds, args.reps, args.time_scale)
    res["config"] = f"{overrides} time_scale {args.time_scale}; " + res["config"].split(";", 1)[1]
    Path(args.out).write_text(json.dumps(res, indent=1))
    print(json.dumps({k: res[k] for k in ("headless_per_min", "app_per_min", "app_vs_headless",
                                          "phases_app_vs_headless")}))


if __name__ == "__main__":
    main()
