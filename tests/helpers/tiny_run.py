"""One sim run to its end, its events in a list: the smallest whole run (tiny profile, 2^8, one
sector of one partition, one worker) with a key cache of the caller's (start-up tests)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prover.config import load_config
from prover.pipeline.engine import Engine


def tiny_run(cache: Path, phases: Any = None) -> list:
    evs: list = []
    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=8, sectors=1, partitions=1,
                      workers_per_gpu=1, time_scale=0.05, cache_dir=str(cache))
    eng = Engine(cfg, [evs.append], phases=phases)
    eng.start()
    assert eng.wait(120)
    return evs
