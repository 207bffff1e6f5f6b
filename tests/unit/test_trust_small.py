"""Issue 44's smaller findings, each as a user meets it: one line and the documented status,
nothing left behind."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
C2TUI = [sys.executable, "-m", "c2tui"]
REC = ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl"


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


@pytest.mark.timeout(120)
def test_a_host_ram_budget_below_the_key_is_a_usage_error_without_a_traceback(tmp_path: Path) -> None:
    r = subprocess.run([*C2TUI, "record", "--backend", "sim", "--constraints-log2", "8", "--sectors", "1",
                        "--host-ram-budget", "1MiB", "-o", str(tmp_path / "r.jsonl")], cwd=ROOT, env=ENV,
                       capture_output=True, text=True, timeout=110)
    assert r.returncode == 2, r.stderr[-500:]
    assert "Traceback" not in r.stdout + r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: --host-ram-budget: key 2^8")


def test_a_vram_sample_period_that_would_flood_the_recording_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text("vram_sample_s = 1e-9\n")
    r = _run("config", "--check", str(tmp_path / "c.toml"))
    assert r.exit_code == 2 and "vram_sample_s" in r.output and "0.02" in r.output


def _no_file_writes() -> None:  # in the child: every write to a file fails (EFBIG), as on a full disk
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


@pytest.mark.timeout(120)
def test_a_recording_that_cannot_be_begun_leaves_no_empty_file_to_block_the_retry(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    r = subprocess.run([*C2TUI, "record", "--backend", "sim", "--constraints-log2", "8", "--sectors", "1", "-o", str(out)],
                       cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=110, preexec_fn=_no_file_writes)
    assert r.returncode == 3 and "cannot write recording" in r.stderr, r.stderr[-400:]
    assert not out.exists()  # a retry needs no --force


def test_an_output_path_ending_in_a_slash_is_refused_not_written_as_a_file(tmp_path: Path) -> None:
    r = _run("export", str(REC), "-o", f"{tmp_path}/dir/")
    assert r.exit_code == 2 and "ends in '/'" in r.output
    assert not (tmp_path / "dir").exists()


@pytest.mark.timeout(60)
def test_run_refuses_a_cache_dir_that_is_not_one_as_record_does() -> None:
    for cmd in ("run", "record"):
        r = _run(cmd, "--backend", "sim", "--cache-dir", "/dev/null", *(["-o", "/tmp/never.jsonl"] if cmd == "record" else []))
        assert r.exit_code == 2 and "--cache-dir" in r.output and "not a directory" in r.output, (cmd, r.output)


def test_the_same_arm_twice_is_refused() -> None:
    r = _run("experiment", "--arm", "lock_mode=single", "--arm", "two-lock", "--arm", "single")
    assert r.exit_code == 2 and "arm 3 (single) sets the same knobs as arm 1" in r.output


def test_a_control_too_long_is_one_line() -> None:
    from prover import AttachClient

    client = AttachClient("/nonexistent.sock", name="t")
    with pytest.raises(ValueError) as info:
        from prover.attach import wire

        client.request(wire.Control, spec="x" * 201)
    assert str(info.value) == "spec: String should have at most 200 characters"


def test_a_huge_list_in_a_config_is_named_in_a_short_line(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text("gpus = [" + ", ".join(str(i % 1000) for i in range(60000)) + "]\n")
    r = _run("config", "--check", str(tmp_path / "c.toml"))
    assert r.exit_code == 2 and "over the bound of 64" in r.output
    assert max(len(line) for line in r.output.splitlines()) < 400


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_cordoning_the_last_gpu_over_attach_warns(tmp_path: Path) -> None:
    sock = tmp_path / "p.sock"
    proc = subprocess.Popen([*C2TUI, "record", "--backend", "sim", "--gpus", "2", "--constraints-log2", "8", "--duration",
                             "300", "-q", "-o", str(tmp_path / "r.jsonl"), "--listen", str(sock)], cwd=ROOT, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 120
        while not sock.exists() and time.monotonic() < end:
            time.sleep(0.05)

        def send(spec: str) -> subprocess.CompletedProcess:
            return subprocess.run([*C2TUI, "attach", str(sock), "--send", spec], cwd=ROOT, env=ENV, capture_output=True,
                                  text=True, timeout=60)

        first = send("cordon=gpu0")
        assert first.returncode == 0 and "warning" not in first.stderr, first.stderr
        last = send("cordon=gpu1")
        assert last.returncode == 0 and "warning: gpu1 is the last GPU taking work" in last.stderr, last.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
