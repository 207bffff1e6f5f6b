"""The bench scripts' shared harness: machine info, rows saved whole after every change, the deadline."""
from __future__ import annotations

import json
import time

import harness


def test_rows_machine_and_deadline(tmp_path) -> None:
    rows = harness.Rows(tmp_path / "r" / "out.json", machine=harness.machine(), what="a test")
    rows.new(log2=8)["ms"] = 1.5
    rows.save()
    doc = json.loads((tmp_path / "r" / "out.json").read_text())
    assert doc["rows"] == [{"log2": 8, "ms": 1.5}] and doc["what"] == "a test" and doc["machine"]["cpus"] >= 1
    assert harness.time_left(None, 1e9) and not harness.time_left(time.time() + 5, 60)
    args = harness.parser("a bench\nmore").parse_args(["--out", "x.json", "--deadline", "12"])
    assert (args.out, args.deadline) == ("x.json", 12.0)
