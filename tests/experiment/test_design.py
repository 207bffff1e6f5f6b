"""Arms in the knob vocabulary, refused in words; the schedule's orders; the arms' full assignments."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from prover.experiment.design import Design, arm_of, parse_arm, schedule


def test_an_arm_is_knobs_in_the_vocabulary() -> None:
    a = parse_arm("lock_mode=two-lock, mem_sync=stream")
    assert a.knobs == {"lock_mode": "two-lock", "mem_sync": "stream"}
    assert a.label == "lock_mode=two-lock,mem_sync=stream"
    assert parse_arm("two-lock,stream").knobs == a.knobs  # bare values, as --switch takes them
    assert parse_arm("workers=4,prestage=off").knobs == {"workers_per_gpu": 4, "prestage": False}
    assert parse_arm("prestage=off").label == "prestage=off"


@pytest.mark.parametrize("spec,words", [
    ("lock_mode=triple", "lock_mode must be one of"),
    ("warp=9", "unknown knob 'warp'"),
    ("workers_per_gpu=99", "integer 1..16"),
    ("paused=on", "not a setting to compare"),
    ("lock_mode=single,lock_mode=narrow", "sets lock_mode twice"),
    (" , ", "sets no knob"),
    ("vram_budget=lots", "vram_budget"),
])
def test_a_bad_arm_is_refused_in_words(spec: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_arm(spec)


def test_abab_keeps_the_order_and_blocks_draw_each_cycle_from_the_seed() -> None:
    assert schedule(3, 2, "abab") == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    s = schedule(3, 50, "blocks", seed=5)
    assert s == schedule(3, 50, "blocks", seed=5) != schedule(3, 50, "blocks", seed=6)
    for c in range(50):
        assert sorted(a for cc, a in s if cc == c) == [0, 1, 2]  # a complete block every cycle
    firsts = {a for cc, a in s if (cc, a) == next(x for x in s if x[0] == cc)}
    assert firsts == {0, 1, 2}


def test_the_design_refuses_what_cannot_be_counted() -> None:
    a, b = parse_arm("single"), parse_arm("two-lock")
    with pytest.raises(ValidationError, match="settle"):
        Design(arms=[a, b], hold_s=5, settle_s=5)
    with pytest.raises(ValidationError):
        Design(arms=[a])
    with pytest.raises(ValidationError):
        Design(arms=[a, b], hold_s=float("nan"))
    assert Design(arms=[a, b], cycles=3, hold_s=20, settle_s=5).seconds == 120


def test_an_arm_leaves_the_knobs_it_does_not_name_at_their_start() -> None:
    d = Design(arms=[parse_arm("lock_mode=single"), parse_arm("lock_mode=two-lock,mem_sync=stream")])
    assert d.knob_names() == ["lock_mode", "mem_sync"]
    start = {"lock_mode": "two-lock", "mem_sync": "device", "workers_per_gpu": 3}
    assert d.resolved(start) == [{"lock_mode": "single", "mem_sync": "device"},
                                 {"lock_mode": "two-lock", "mem_sync": "stream"}]
    with pytest.raises(ValueError, match="mem_sync"):
        d.resolved({"lock_mode": "single"})


def test_arm_of_checks_typed_knobs() -> None:
    assert arm_of({"workers_per_gpu": 2, "prestage": True}).label == "workers_per_gpu=2,prestage=on"
    with pytest.raises(ValueError):
        arm_of({"workers_per_gpu": 0})
