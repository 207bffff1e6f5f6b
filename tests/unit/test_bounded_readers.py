"""Readers bounded and linear, inputs strict (issue 35): every input path refuses a FIFO or a
device before reading, files have their kind's size cap, blank lines count, recordings and
configs are parsed strictly and every field of an event is within prover/bounds.py; each
case one line and exit 2."""
from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from c2tui.widgets.common import Line
from prover import bounds
from prover.config import ConfigError, load_config
from prover.groth16 import export
from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
TWO_GPUS = ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl"
pytestmark = pytest.mark.timeout(60)  # a FIFO read once blocked forever: a hang fails here


def cli(*args: str):  # type: ignore[no-untyped-def]
    r = CliRunner().invoke(main, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exc_info
    assert "Traceback" not in r.output
    return r


def _head(n: int = 6) -> list[str]:
    return TWO_GPUS.read_text().splitlines()[:n]


def _rec(tmp_path: Path, *lines: str | dict, name: str = "r.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in [*_head(), *lines]) + "\n")
    return p


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    p = tmp_path / "fifo"
    os.mkfifo(p)
    return p


@pytest.mark.parametrize("args", [
    ["summary", "@"], ["replay", "@"], ["screenshot", "@", "--at", "1", "-o", "@OUT.svg"], ["export", "@", "-o", "@OUT.json"],
    ["compare", "@", "@"], ["config", "--check", "@"], ["record", "--config", "@", "--out", "@OUT.jsonl"],
])
def test_a_fifo_given_as_input_is_refused_at_once(fifo: Path, tmp_path: Path, args: list[str]) -> None:
    t0 = time.monotonic()
    r = cli(*[a.replace("@OUT", str(tmp_path / "out")).replace("@", str(fifo)) if a.startswith("@") else a for a in args])
    assert r.exit_code == 2 and "FIFO" in r.output, r.output
    assert time.monotonic() - t0 < 20
    assert not list(tmp_path.glob("out*"))


def test_a_fifo_in_a_proof_directory_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "proof"
    d.mkdir()
    for name in ("proof.json", "verification_key.json", "public.json"):
        os.mkfifo(d / name)
    r = cli("verify", str(d))
    assert r.exit_code == 2 and "FIFO" in r.output, r.output


def test_each_proof_file_has_its_kinds_cap(tmp_path: Path) -> None:
    """A 63 MB proof.json took 2.7 GB to parse before "malformed": a proof is a few KiB."""
    big = tmp_path / "proof.json"
    big.write_bytes(b'{"pi_a": [' + b'"1",' * (bounds.MAX_PROOF_BYTES // 4) + b'"1"]}')
    with pytest.raises(export.MalformedInput, match="over the bound"):
        export.load_proof(big)
    big.write_bytes(b"[" + b'"1",' * (bounds.MAX_PUBLIC_BYTES // 4) + b'"1"]')
    with pytest.raises(export.MalformedInput, match="over the bound"):
        export.load_public(big)


@pytest.mark.timeout(30)
def test_blank_lines_count_toward_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """390 KB of gzipped blank lines took 91 s: they count as events now."""
    p = tmp_path / "blank.jsonl.gz"
    with gzip.open(p, "wb") as f:
        f.write(("\n".join(_head()) + "\n").encode() + b"\n" * (bounds.MAX_EVENTS + 10))
    t0 = time.monotonic()
    rec = read_recording(p)
    assert "events" in (rec.error or "") and "blank line" in rec.error, rec.error
    assert time.monotonic() - t0 < 15


def test_config_is_strict(tmp_path: Path) -> None:
    for body in ("workers_per_gpu = true", "workers_per_gpu = 2.0", 'paused = "yes"', 'seed = "3"',
                 "time_scale = true", '[faults]\noom_rate = "0.5"', "[faults]\nnvml_missing = 1"):
        p = tmp_path / "c.toml"
        p.write_text(body + "\n")
        with pytest.raises(ConfigError):
            load_config(p)
        r = cli("config", "--check", str(p))
        assert r.exit_code == 2 and "invalid config" in r.output.strip().splitlines()[-1], (body, r.output)
    p.write_text("vram_budget = " + "1" + "0" * 29 + "\n")  # it ran, and wrote a recording its reader refused
    with pytest.raises(ConfigError, match="over 1 EiB"):
        load_config(p)
    p.write_text('workers_per_gpu = 2\ntime_scale = 1\nvram_budget = "20GiB"\n[faults]\noom_rate = 0\n'
                 '[faults.phase_error]\nntt_h = 0.5\n')
    cfg = load_config(p)  # ints where floats go are still numbers; budgets keep their own parse
    assert cfg.workers_per_gpu == 2 and cfg.time_scale == 1.0 and cfg.faults.phase_error


NOTE = {"kind": "note", "t": 5.0, "level": "info", "text": "x"}
ALLOC = {"kind": "alloc", "t": 5.0, "gpu": 0, "owner": "g0w0", "name": "d_a", "bytes": 1}
GPU = {"kind": "gpu_info", "t": 5.0, "gpu": 0, "name": "g", "total_bytes": 1 << 34, "budget_bytes": 1 << 34,
       "simulated": True}


def _acq(i: int) -> dict:
    return {"kind": "lock_acquired", "t": 5.0 + i * 1e-3, "gpu": 0, "lock": "compute", "worker": f"g0w{i}", "wait": 0.0}


@pytest.mark.parametrize("lines, needle", [
    ([{**NOTE, "t": "1.0"}], "valid number"),  # strict: a string is not a time
    ([{**NOTE, "level": 1}], "not a valid event"),
    ([{**GPU, "simulated": "yes"}], "not a valid event"),
    ([{**GPU, "budget_bytes": 10**400}], "budget_bytes=an integer of"),
    ([{**GPU, "budget_bytes": -1}], "budget_bytes=-1 is outside"),
    ([{**ALLOC, "bytes": 10**30}], "bytes=an integer of"),
    ([{**NOTE, "t": 1e308}], "t=1e+308 is outside"),
    ([{"kind": "partition_queued", "t": 5.0, "part": "p" * 1_000_000, "sector": 0, "index": 0}], "characters long"),
    ([{"kind": "partition_queued", "t": 5.0, "part": "s1p1", "sector": 10**12, "index": 0}], "sector="),
    ([_acq(i) for i in range(16)], "a second compute holder on gpu0"),
])
def test_absurd_but_typed_values_are_refused(tmp_path: Path, lines: list, needle: str) -> None:
    p = _rec(tmp_path, *lines)
    rec = read_recording(p)
    assert rec.error and needle in rec.error, rec.error
    r = cli("summary", str(p))
    assert r.exit_code == 2 and needle in " ".join(r.output.split()), r.output


def test_a_long_note_is_cut_not_refused(tmp_path: Path) -> None:
    rec = read_recording(_rec(tmp_path, {**NOTE, "text": "y" * 100_000}))
    assert rec.error is None
    assert len(rec.events[-1].text) == bounds.MAX_TEXT_LEN


def test_a_compute_lock_handed_over_reads() -> None:
    for p in sorted((ROOT / "tests" / "tui" / "recordings").glob("*.jsonl*")):
        assert read_recording(p).error is None, p


def test_truncation_is_linear() -> None:
    """A 1 MB part name was cut a character at a time: screenshot/replay hung past 180 s."""
    t0 = time.monotonic()
    for _ in range(20):
        Line("x" * (1 << 20)).truncate(120)
    assert time.monotonic() - t0 < 5
    assert Line("ab").append("界界界").truncate(5, "ellipsis").plain == "ab界…"
