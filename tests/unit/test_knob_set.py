"""One syntax for knob sets (prover/knob_set.py, issue 44): every door that names a setting
reads it through parse_knob_set, so a set written for one is understood by all."""
from __future__ import annotations

import pytest

from prover import knob_set_text, parse_knob_set
from prover.knob_set import MAX_SET_CHARS


@pytest.mark.parametrize("spec,want", [
    ("two-lock", {"lock_mode": "two-lock"}),  # the old one-word form
    ("stream", {"mem_sync": "stream"}),
    ("mem_sync=stream", {"mem_sync": "stream"}),
    ("lock_mode=two-lock,mem_sync=device", {"lock_mode": "two-lock", "mem_sync": "device"}),
    ("two-lock,stream", {"lock_mode": "two-lock", "mem_sync": "stream"}),
    (" lock-mode=reserved , workers=5 ", {"lock_mode": "reserved", "workers_per_gpu": 5}),
    ("pause", {"paused": True}),
    ("prestage=off,b_g2=gpu", {"prestage": False, "b_g2": "gpu"}),
    ("vram_budget=20GiB,mem_sync=stream", {"vram_budget": 20 * 2**30, "mem_sync": "stream"}),
    # a knob whose value is a comma list keeps the items that name no knob
    ("class_gpus=winning=1,window=0", {"class_gpus": "winning=1,window=0"}),
    ("class_gpus=winning=1,workers=3", {"class_gpus": "winning=1", "workers_per_gpu": 3}),
    ("two-lock,two-lock", {"lock_mode": "two-lock"}),  # the same value twice says the same thing
])
def test_a_set_parses_to_its_knobs_in_order(spec, want):
    got = parse_knob_set(spec)
    assert got == want and list(got) == list(want)
    assert parse_knob_set(knob_set_text(got)) == got  # the text a set is shown as reads back


@pytest.mark.parametrize("spec,words", [
    ("", "names no knob"), (" , ", "names no knob"),
    ("two-lock,single", "sets lock_mode twice (two-lock and single)"),
    ("lock_mode=two-lock,foo", "in 'lock_mode=two-lock,foo': unknown switch 'foo'"),
    ("lock_mode=two-lock,mem_sync=often", "mem_sync must be one of device, stream, got 'often'"),
    ("workers=99", "workers_per_gpu must be an integer 1..16"),
    ("cancel=s3p2", "unknown knob 'cancel'"),
    ("l" * (MAX_SET_CHARS + 1), f"at most {MAX_SET_CHARS}"),
])
def test_a_bad_set_is_one_line_naming_what_is_wrong(spec, words):
    with pytest.raises(ValueError) as got:
        parse_knob_set(spec)
    assert words in str(got.value) and "\n" not in str(got.value)
