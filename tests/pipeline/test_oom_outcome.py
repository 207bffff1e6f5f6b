"""An OOM says what came of it (issue 42: the engine calling every OOM "failed" survived the
suite): a GPU section that finds no room is tried again, and only the last refused try ends the
attempt. The engine's own events on the sim, faults injected at every allocation or some."""
from __future__ import annotations

from typing import Any

import pytest

from prover.config import load_config
from prover.fold.apply import fold
from prover.fold.summary import summarize
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases


def _run(oom_rate: float, partitions: int, seed: int = 1) -> list[Any]:
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=0.05, sectors=1, partitions=partitions,
                      workers_per_gpu=1, constraints_log2=8, lock_mode="single", seed=seed,
                      faults={"oom_rate": oom_rate})
    seen: list[Any] = []
    eng = Engine(cfg, [seen.append], phases=NullPhases()).start()
    assert eng.wait(60)
    return seen


def _per_part(events: list[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in events:
        if e.kind == "oom":
            out.setdefault(e.part, []).append(e.outcome)
    return out


@pytest.mark.timeout(90)
def test_every_refused_try_but_the_last_is_retried_and_the_last_fails_the_attempt() -> None:
    events = _run(1.0, partitions=2)
    runs = _per_part(events)
    assert set(runs) == {e.part for e in events if e.kind == "partition_done"}
    for part, outcomes in runs.items():
        assert outcomes[-1] == "failed" and set(outcomes[:-1]) == {"retried"} and len(outcomes) > 1, (part, outcomes)
    done = {e.part: e.ok for e in events if e.kind == "partition_done"}
    assert not any(done.values())
    sm = summarize(fold(events))
    assert sm.partitions_failed == 2


@pytest.mark.timeout(90)
def test_an_oom_the_section_survives_is_retried_and_its_partition_verifies() -> None:
    events = _run(0.3, partitions=6, seed=3)
    runs = _per_part(events)
    ok = {e.part for e in events if e.kind == "partition_done" and e.ok}
    survived = [p for p, outs in runs.items() if p in ok]
    assert survived, "no partition met an OOM and went on: the retried path went untried"
    for p in survived:
        assert "failed" not in runs[p] and runs[p] and set(runs[p]) == {"retried"}
