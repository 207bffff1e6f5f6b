"""What the bench scripts share: the import path (one place), machine info, the argument
conventions (--out, --deadline), JSON rows written as they go, the device-call deadline.

    import harness                       # first import of a script run as benchmarks/x.py:
                                         # puts the repository root on sys.path
    ap = harness.parser(__doc__)         # --out FILE and --deadline EPOCH_S, the conventions
    lo, hi = harness.ratio_interval(before, after)  # an interleaved comparison's 95% interval
    rows = harness.Rows(args.out, machine=harness.machine())
    row = rows.new(log2=L); ...; rows.save()   # the JSON file is whole after every save
    if not harness.time_left(args.deadline, need_s): ...  # skip what would end past the deadline
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the one path edit of the bench scripts: prover, c2tui, tests.helpers
    sys.path.insert(0, str(ROOT))


def machine(gpu: bool = False) -> dict[str, Any]:
    """Where a figure was measured: host, CPUs, platform, Python (and the GPU, when asked and
    one is visible). Every result file carries it."""
    info: dict[str, Any] = {"host": platform.node().split(".")[0] or "host", "cpus": os.cpu_count(),
                            "machine": platform.machine(), "platform": platform.platform(),
                            "python": platform.python_version(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    if gpu:
        try:
            import cupy

            props = cupy.cuda.runtime.getDeviceProperties(0)
            info["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
            info["gpus"] = cupy.cuda.runtime.getDeviceCount()
            info["cupy"] = cupy.__version__
        except Exception as exc:  # no CuPy or no device: said, not guessed
            info["gpu"] = f"none ({type(exc).__name__})"
    return info


def parser(doc: str | None, out: str | None = None) -> argparse.ArgumentParser:
    """An argument parser with the conventions: --out (the JSON result file) and --deadline
    (epoch seconds: nothing starts that would end later; a device call's budget)."""
    ap = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0] if doc else None)
    ap.add_argument("--out", default=out, help="the JSON result file (written after every row)")
    ap.add_argument("--deadline", type=float, default=None,
                    help="epoch seconds: a step that would end later is skipped, and said so")
    return ap


def time_left(deadline: float | None, need_s: float = 0.0) -> bool:
    """True when a step needing `need_s` seconds still ends before the deadline (or none)."""
    return deadline is None or time.time() + need_s <= deadline


class Rows:
    """Result rows saved as JSON after every change (a killed device call keeps what ran):
    {"machine": ..., "rows": [...], **extra}."""

    def __init__(self, path: str | Path | None, machine: dict[str, Any] | None = None, **extra: Any) -> None:
        self.path = Path(path) if path else None
        self.doc: dict[str, Any] = {"machine": machine or {}, **extra, "rows": []}
        self.rows: list[dict[str, Any]] = self.doc["rows"]

    def new(self, **fields: Any) -> dict[str, Any]:
        self.rows.append(dict(fields))
        return self.rows[-1]

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, default=str))
        tmp.replace(self.path)


def ratio_interval(before: list[float], after: list[float], n: int = 4000, seed: int = 1) -> tuple[float, float]:
    """The 95% interval of median(after) / median(before) over interleaved rounds, by resampling
    the rounds (a round's two runs kept together: they ran side by side, under the same load)."""
    if len(before) != len(after) or not before:
        raise ValueError("ratio_interval wants one before and one after a round")
    rng = random.Random(seed)
    k = len(before)
    boots = []
    for _ in range(n):
        idx = [rng.randrange(k) for _ in range(k)]
        boots.append(statistics.median(after[i] for i in idx) / statistics.median(before[i] for i in idx))
    boots.sort()
    return boots[int(0.025 * n)], boots[int(0.975 * n) - 1]
