"""benchmarks/experiment_native.py's one-shot device call, without a device: the 2^24 plan
runs no more workers than have run there (session 12's 2^24 stage ended silently with 16),
`--stages` reads as written, and the guard stops a stage on the memory floor or the budget."""
from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

import experiment_native as xn
from stage_guard import Clock, Guard, mem_available


def test_no_arm_or_tune_value_runs_more_workers_than_the_cap() -> None:
    for log2 in (22, 24):
        p = xn.plan_of(log2)
        most = xn.MAX_WORKERS[log2]
        assert p["workers"] <= most and all(w <= most for w in (*p["variants"], *p["tune_workers"]))
    names, arms = xn.arms_of(24)
    assert "two-lock + stream, 16 workers" not in names and len(arms) == 5
    # 5 arms x 4 cycles x 5 s: the experiment fits a ~260 s call with a 2^24 start-up
    assert xn.experiment_s(24) <= 110


def test_stages_read_as_written_and_a_bad_one_is_refused() -> None:
    assert xn.stages_of(SimpleNamespace(stages="exp:24,tune:24", sizes="22")) == [("exp", 24), ("tune", 24)]
    assert xn.stages_of(SimpleNamespace(stages=None, sizes="22,24")) == [
        ("exp", 22), ("tune", 22), ("exp", 24), ("tune", 24)]
    with pytest.raises(SystemExit, match="not exp:LOG2"):
        xn.stages_of(SimpleNamespace(stages="exp24", sizes=""))


def _stopped(g: Guard) -> bool:
    end = time.monotonic() + 5
    while not g.stop.is_set() and time.monotonic() < end:
        time.sleep(0.05)
    return g.stop.is_set()


@pytest.mark.skipif(mem_available() is None, reason="no /proc/meminfo")
def test_the_guard_stops_a_stage_under_the_memory_floor() -> None:
    g = Guard(Clock(1000.0), floor_bytes=1 << 60, margin_s=1.0)
    try:
        g.arm()
        assert _stopped(g) and "MemAvailable" in (g.why or "")
    finally:
        g.close()


def test_the_guard_stops_a_stage_when_the_budget_is_nearly_spent() -> None:
    g = Guard(Clock(0.5), floor_bytes=0, margin_s=1.0)
    try:
        g.arm()
        assert _stopped(g) and "budget" in (g.why or "")
    finally:
        g.close()
