"""Alignment of recordings (--align, --at first-gpu+10) and `c2tui compare` of two native
recordings: both shown, on one clock after each one's first GPU section."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover import events as ev
from prover.fold.align import anchor_time, nice_step, parse_at, resolve_at
from prover.fold.compare import compare
from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "benchmarks" / "recordings" / "h200" / "native"
DEVICE, STREAM = NATIVE / "n22_device_tight.jsonl.gz", NATIVE / "n22_stream_card.jsonl.gz"


@pytest.mark.parametrize("spec,want", [("25", (None, 25.0)), ("first-gpu+10", ("first-gpu", 10.0)),
                                       ("steady", ("steady", 0.0)), ("start-1.5", ("start", -1.5)),
                                       (" first-gpu + 2 ", ("first-gpu", 2.0)), (".5", (None, 0.5))])
def test_parse_at(spec: str, want: tuple) -> None:
    assert parse_at(spec) == want


@pytest.mark.parametrize("spec", ["", "gpu+3", "first-gpu+", "10s", "first-gpu++1", "first-gpu+nan"])
def test_parse_at_refuses_with_the_forms_named(spec: str) -> None:
    with pytest.raises(ValueError, match="first-gpu\\+10"):
        parse_at(spec)


def test_anchors_of_a_native_recording() -> None:
    evs = read_recording(DEVICE).events
    first_lock = next(e.t for e in evs if isinstance(e, ev.LockAcquired))
    assert anchor_time(evs, "start") == 0.0 and anchor_time(evs, "first-gpu") == first_lock
    assert first_lock > 8.0  # this run builds its keys first: aligned at t it would be compared in set-up
    assert anchor_time(evs, "steady") > first_lock
    assert resolve_at("first-gpu+10", evs) == pytest.approx(first_lock + 10)
    with pytest.raises(ValueError, match="no GPU section"):
        anchor_time([e for e in evs if e.t < 1.0], "first-gpu")


def test_nice_step() -> None:
    assert [nice_step(s) for s in (24.0, 80.0, 3.0, 700.0)] == [5.0, 10.0, 0.5, 100.0]


def test_compare_aligns_at_each_ones_first_gpu_section() -> None:
    runs = [(str(p), read_recording(p).events) for p in (DEVICE, STREAM)]
    cmp = compare(runs)
    a, b = cmp.runs
    assert a.anchor_t > 8.0 > 1.0 > b.anchor_t
    for row in cmp.rows:  # the same time after each one's anchor, in each one's own clock
        if row.t[0] is not None and row.t[1] is not None:
            assert row.t[0] - a.anchor_t == pytest.approx(row.after) == row.t[1] - b.anchor_t
    mid = cmp.rows[2]
    assert mid.windowed_per_min[0] > 100 and mid.windowed_per_min[1] > 100  # both proving there
    assert a.summary.fallbacks > 0 == b.summary.fallbacks
    assert len(a.summary.segments) == len(b.summary.segments) == 1


def test_compare_cli_shows_both_aligned() -> None:
    r = CliRunner().invoke(main, ["compare", str(DEVICE), str(STREAM)], env={"COLUMNS": "120"},
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    out = r.output
    assert "aligned at first-gpu" in out and DEVICE.name in out and STREAM.name in out
    assert "A segments" in out and "B segments" in out and "B/A" in out and "after first-gpu" in out
    assert max(len(line) for line in out.splitlines()) <= 120
    j = json.loads(CliRunner().invoke(main, ["compare", str(DEVICE), str(STREAM), "--json", "--align", "steady"]).output)
    assert j["align"] == "steady" and [r["label"] for r in j["runs"]] == ["A", "B"]


@pytest.mark.parametrize("args,needle", [([str(DEVICE)], "two recordings"),
                                         ([str(DEVICE), str(STREAM), "--align", "middle"], "--align")])
def test_compare_bad_usage(args: list[str], needle: str) -> None:
    r = CliRunner().invoke(main, ["compare", *args])
    assert r.exit_code == 2 and needle in r.output


def test_screenshot_at_an_anchor(tmp_path: Path) -> None:
    out = tmp_path / "x.svg"
    r = CliRunner().invoke(main, ["screenshot", str(DEVICE), "--at", "first-gpu+10", "--size", "80x24", "-o", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    t = anchor_time(read_recording(DEVICE).events, "first-gpu") + 10
    assert f"@ first-gpu+10 ({t:.1f}s)" in out.read_text().replace("&#160;", " ")
    bad = CliRunner().invoke(main, ["screenshot", str(DEVICE), "--at", "steady+999", "-o", str(tmp_path / "y.svg")])
    assert bad.exit_code == 2 and "outside the recording" in bad.output


def test_compare_of_a_truncated_recording_shows_its_prefix_and_exits_2_as_summary_does(tmp_path: Path) -> None:
    import gzip

    lines = gzip.decompress(STREAM.read_bytes()).splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[: len(lines) * 2 // 3]) + lines[len(lines) * 2 // 3][:20])  # torn last line
    r = CliRunner().invoke(main, ["compare", str(DEVICE), str(cut)], env={"COLUMNS": "120"})
    assert r.exit_code == 2, r.output
    assert "B segments" in r.output and "comparing the" in r.output and "valid events before it" in r.output
    assert CliRunner().invoke(main, ["summary", str(cut)]).exit_code == 2
