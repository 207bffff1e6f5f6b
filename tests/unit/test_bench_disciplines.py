"""benchmarks/bench_disciplines.py end to end on the sim backend at a small size: gzipped
recordings that read back, rows as JSON, the RESULTS table and the decomposition."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


@pytest.mark.timeout(120)
def test_bench_disciplines_sim_small(tmp_path, capsys):
    import bench_disciplines

    from prover.record import read_recording

    assert bench_disciplines.main(["--backend", "sim", "--log2", "10", "--seconds", "0.5", "--workers", "2",
                                   "--runs", "single,narrow", "--budgets", "tight", "--out-dir", str(tmp_path)]) == 0
    recs = sorted(p.name for p in tmp_path.glob("*.jsonl.gz"))
    assert recs == ["n10_narrow_tight.jsonl.gz", "n10_single_tight.jsonl.gz"]
    assert not list(tmp_path.glob("*.jsonl"))  # gzipped, the plain files gone
    assert read_recording(tmp_path / recs[0]).events[-1].kind == "run_ended"
    rows = json.loads((tmp_path / "disciplines_10.json").read_text())
    assert [r["config"]["lock_mode"] for r in rows] == ["single", "narrow"]
    md = (tmp_path / "disciplines_10.md").read_text()
    assert "SIMULATED 2^10" in md and "narrowing the lock (narrow / single)" in md
    assert "| tight" in md and "x (" in md
