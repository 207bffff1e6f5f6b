"""Every reader bounded (prover/bounds.py): counts, sizes, nesting, numeric range. Each case
was a MemoryError, a RecursionError, a traceback or an unbounded read before."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover import bounds
from prover.config import ConfigError, RunConfig, load_config
from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
TWO_GPUS = ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl"
HEAD = TWO_GPUS.read_text().splitlines()[:2]


def _rec(tmp_path: Path, *events: dict, gz: bool = False) -> Path:
    text = "\n".join([*HEAD, *(json.dumps(e) for e in events)]) + "\n"
    p = tmp_path / ("r.jsonl.gz" if gz else "r.jsonl")
    p.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return p


def _summary_fails(p: Path, needle: str) -> None:
    r = CliRunner().invoke(main, ["summary", str(p)])
    assert r.exit_code == 2 and r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 2 and needle in " ".join(r.output.split()), r.output


def test_host_claiming_10e12_gpus_is_a_bad_line(tmp_path: Path) -> None:
    p = _rec(tmp_path, {"kind": "host_joined", "t": 0.1, "host": "h0", "node": "n", "gpus": 10**12, "gpu_offset": 0})
    rec = read_recording(p)
    assert rec.bad_line == 3 and "host_joined claims" in (rec.error or "")
    _summary_fails(p, "line 3")


@pytest.mark.parametrize("util", ["NaN", "Infinity", "7.0"])
def test_utilisation_must_be_finite_and_a_share(tmp_path: Path, util: str) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join([*HEAD, '{"kind":"vram_sample","t":0.2,"gpu":0,"budget":1,"pool_reserved":0,'
                            f'"pool_used":0,"util":{util}}}']) + "\n")
    rec = read_recording(p)
    assert rec.bad_line == 3 and "util" in (rec.error or ""), rec.error


def test_events_and_decompressed_bytes_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = [{"kind": "note", "t": 0.1, "level": "info", "text": "x" * 100} for _ in range(50)]
    monkeypatch.setattr(bounds, "MAX_EVENTS", 20)
    rec = read_recording(_rec(tmp_path, *notes))
    assert len(rec.events) == 20 and "events 21 is over the bound of 20" in (rec.error or "")
    monkeypatch.setattr(bounds, "MAX_EVENTS", 10**6)
    monkeypatch.setattr(bounds, "MAX_DECOMPRESSED", 3000)
    rec = read_recording(_rec(tmp_path, *notes, gz=True))
    assert rec.error and "bytes read" in rec.error and 0 < len(rec.events) < 50


def test_hosts_and_workers_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_HOSTS", 2)
    evs = [{"kind": "note", "t": 0.1, "host": f"h{i}", "level": "info", "text": "x"} for i in range(4)]
    assert "hosts 3 is over" in (read_recording(_rec(tmp_path, *evs)).error or "")
    monkeypatch.setattr(bounds, "MAX_WORKERS", 1)
    evs = [{"kind": "worker_started", "t": 0.1, "gpu": 0, "worker": f"g0w{i}"} for i in range(3)]
    assert "workers 2 is over" in (read_recording(_rec(tmp_path, *evs)).error or "")


def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    head = json.loads(HEAD[0])
    p = tmp_path / "deep.jsonl"
    p.write_text(json.dumps(head)[:-1] + ', "note2": ' + "[" * 50000 + "]" * 50000 + "}\n")
    assert "nesting depth" in (read_recording(p).error or "")
    cfg = tmp_path / "deep.toml"
    cfg.write_text("seed = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="nesting depth"):
        load_config(cfg)
    r = CliRunner().invoke(main, ["record", "--config", str(cfg), "--out", str(tmp_path / "o.jsonl")])
    assert r.exit_code == 2 and "nesting depth" in r.output and r.exception is None or isinstance(r.exception, SystemExit)


def test_gpu_lists_and_non_finite_config_values_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bound of 64"):
        RunConfig(gpus=list(range(65)))
    with pytest.raises(ValueError, match="0..1023"):
        RunConfig(gpus=[0, 5000])
    with pytest.raises(ValueError, match="finite"):
        RunConfig(prestage_wait_s=float("inf"))
    r = CliRunner().invoke(main, ["record", "--gpus", ",".join(map(str, range(100))), "--out", str(tmp_path / "x.jsonl")])
    assert r.exit_code == 2 and "bound of 64" in " ".join(r.output.split()), r.output
