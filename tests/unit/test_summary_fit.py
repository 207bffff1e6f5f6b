"""`summary` tables fit the width (terminal, COLUMNS, 140 piped) and never wrap a value:
too wide a table is split into several, each repeating the key column. And the summary of a
switched run: windowed and since-change rates, one segment entry per knob change."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from c2tui.text.fit_table import column_groups

REC = Path(__file__).resolve().parents[1] / "tui" / "recordings" / "switch_device_stream.jsonl.gz"


def _summary(*args: str, columns: str | None = None) -> str:
    env = {"COLUMNS": columns} if columns is not None else {"COLUMNS": ""}
    r = CliRunner().invoke(main, ["summary", str(REC), *args], env=env, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.parametrize("columns", ["60", "80", "120", "200"])
def test_tables_fit_columns_and_keep_values_whole(columns: str) -> None:
    out = _summary(columns=columns)
    width = int(columns)
    assert max(len(line) for line in out.splitlines()) <= width
    for value in ("verified/min", "compute hold mean", "16.0 GiB", "2.83x", "mem_sync: device -> stream (switch)",
                  "mem_sync=stream", "device sync"):
        assert any(value in line for line in out.splitlines()), (value, columns)


def test_piped_without_columns_is_140_wide() -> None:
    out = _summary()
    assert max(len(line) for line in out.splitlines()) <= 140
    assert "16.0 GiB" in out


def test_column_groups_repeat_the_key_and_split_only_when_needed() -> None:
    cols, rows = ["gpu", "aaaa", "bbbb", "cccc"], [["0", "1", "2", "3"]]
    assert column_groups(cols, rows, 200) == [[0, 1, 2, 3]]
    # each column is 4 + 3 wide, the key 3 + 3, one edge: 1 + 6 + 7 + 7 = 21
    assert column_groups(cols, rows, 21) == [[0, 1, 2], [0, 3]]
    assert column_groups(cols, rows, 5) == [[0, 1], [0, 2], [0, 3]]  # never an empty table


def test_summary_json_of_a_switched_run_has_one_entry_per_segment() -> None:
    doc = json.loads(_summary("--json"))
    segs = doc["segments"]
    assert len(segs) == 2 == doc["mode_changes"] + 1
    assert [s["knobs"]["mem_sync"] for s in segs] == ["device", "stream"]
    assert segs[0]["ratio"] is None and 2.0 < segs[1]["ratio"] < 3.5
    assert segs[0]["device_syncs"] > 0 and segs[1]["change"] == "mem_sync: device -> stream (switch)"
    assert doc["rate_window_s"] == 30.0 and doc["windowed_throughput_per_min"] > 0
    assert doc["since_change_throughput_per_min"] > doc["throughput_per_min"]
    assert doc["last_change"] == "mem_sync: device -> stream (switch)"


def test_summary_text_names_each_rate() -> None:
    out = _summary(columns="200")
    assert "over the last 30 s" in out and "since mem_sync: device -> stream (switch)" in out
    assert "mean since start" in out and "segments" in out
