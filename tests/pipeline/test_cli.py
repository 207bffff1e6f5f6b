"""`c2tui record` and `c2tui summary`, headless (no TTY), as a user would run them."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover.record import read_recording
from prover.fold.apply import fold

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05"]


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.timeout(60)
def test_record_sectors_then_summary(tmp_path):
    out = tmp_path / "run.jsonl"
    r = invoke("record", "--out", str(out), *FAST, "--sectors", "1", "--partitions", "4",
               "--switch", "0.2:mem_sync=stream", "--switch", "0.1:single")
    assert r.exit_code == 0, r.output
    assert "all proofs verified" in r.output
    rec = read_recording(out)
    assert rec.error is None and rec.events[-1].kind == "run_ended"
    st = fold(rec.events)
    assert st.proofs_ok == 4 and st.mode_changes == 2 and st.knobs["mem_sync"] == "stream"
    s = invoke("summary", str(out))
    assert s.exit_code == 0 and "per GPU" in s.output and "prestage" in s.output
    j = invoke("summary", str(out), "--json")
    doc = json.loads(j.output)
    assert doc["proofs_ok"] == 4 and doc["gpus"][0]["partitions_done"] == 4 and doc["recording"]["error"] is None


@pytest.mark.timeout(60)
def test_record_duration_every_proof_verifies(tmp_path):
    out = tmp_path / "d.jsonl"
    r = invoke("record", "--out", str(out), *FAST, "--duration", "1.5")
    assert r.exit_code == 0, r.output
    st = fold(read_recording(out).events)
    assert st.partitions_done >= 3 and st.proofs_ok == st.partitions_done and st.partitions_failed == 0
    assert st.end_reason == "done (drained)"
    assert not any(p.done_t is None for p in st.partitions.values() if p.phases)  # nothing left half-done


@pytest.mark.parametrize("args,needle", [
    (["--lock-mode", "triple"], "'triple' is not one of 'single', 'narrow', 'two-lock', 'reserved'"),
    (["--vram-budget", "lots"], "vram_budget"),
    (["--workers-per-gpu", "0"], "workers_per_gpu"),
    (["--profile", "gtx480"], "rtx5070ti-16g"),
    (["--switch", "5:sometimes"], "unknown switch"),
    (["--switch", "soon:single"], "AT must be seconds"),
    (["--switch", "5:cancel"], "cancel takes a partition (s3p2) or a sector (s3), got ''"),  # was: unknown switch
    (["--duration", "1", "--sectors", "1"], "not both"),
])
def test_bad_options_exit_2(tmp_path, args, needle):
    r = CliRunner().invoke(main, ["record", "--out", str(tmp_path / "x.jsonl"), "--backend", "sim", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output


def test_cuda_without_gpu_is_clear(tmp_path):
    from prover.device import cuda

    if cuda.available()[0]:
        pytest.skip("a GPU is visible")
    r = CliRunner().invoke(main, ["record", "--out", str(tmp_path / "x.jsonl"), "--backend", "cuda", "--sectors", "1"])
    assert r.exit_code == 3 and "no usable GPU" in r.output and "--backend sim" in r.output


def test_unwritable_out_is_clear(tmp_path):
    r = CliRunner().invoke(main, ["record", "--out", str(tmp_path / "no" / "x.jsonl"), *FAST, "--sectors", "1"])
    assert r.exit_code == 2 and "does not exist" in r.output


@pytest.mark.timeout(60)
def test_summary_of_bad_recording_names_line(tmp_path):
    out = tmp_path / "run.jsonl"
    assert invoke("record", "--out", str(out), *FAST, "--sectors", "1", "--partitions", "2", "-q").exit_code == 0
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:10]) + "\n{broken\n" + "\n".join(lines[10:]) + "\n")
    r = CliRunner().invoke(main, ["summary", str(out)])
    assert r.exit_code == 2 and "line 11" in r.output
    (tmp_path / "junk").write_text("not a recording\n")
    r = CliRunner().invoke(main, ["summary", str(tmp_path / "junk")])
    assert r.exit_code == 2 and "not a c2tui recording" in r.output


@pytest.mark.timeout(90)
def test_ctrl_c_stops_cleanly(tmp_path):
    out = tmp_path / "int.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--out", str(out), *FAST],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until partitions are flowing
        if out.exists() and out.read_text().count('"partition_done"') >= 2:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 3, stderr.decode()  # interrupted: the run did not finish as asked
    assert b"interrupted" in stderr
    rec = read_recording(out)
    assert rec.error is None
    st = fold(rec.events)
    assert st.ended and st.end_reason == "interrupted"
    assert all(lk.holder is None for g in st.gpus.values() for lk in g.locks.values())
    assert all(not g.live for g in st.gpus.values())
    assert st.proofs_failed == 0 and st.proofs_ok >= 2


def test_full_disk_is_clear(tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    r = CliRunner().invoke(main, ["record", "--out", "/dev/full", *FAST, "--sectors", "1"])
    assert r.exit_code == 2 and "is a device node" in r.output
    r = CliRunner().invoke(main, ["record", "--out", "/dev/full", "--force", *FAST, "--sectors", "1"])
    assert r.exit_code == 2 and "is a device node" in r.output  # never written into, never replaced (issue 24)
