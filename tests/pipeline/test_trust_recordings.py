"""Issue 16: recordings are never lost or overwritten, readers never trust a file's claims,
and every option is checked at the edge (one line, a documented exit status, no traceback)."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover import events as ev
from prover.record import RecordingError, RecordingHeader, RecordingWriter, read_recording

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05"]
TWO_GPUS = ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl"


def cli(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def one_line_error(r, code: int, needle: str) -> None:  # type: ignore[no-untyped-def]
    assert r.exit_code == code, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output and needle in " ".join(r.output.split()), r.output


def _lines(n: int = 3) -> list[str]:
    return TWO_GPUS.read_text().splitlines()[:n]


def _recording(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def _started(**over: object) -> str:
    doc = json.loads(_lines(2)[1])
    assert doc["kind"] == "run_started"
    doc.update(over)
    return json.dumps(doc)


# writer ---------------------------------------------------------------------------------------
def test_existing_out_is_not_overwritten_without_force(tmp_path: Path) -> None:
    out = tmp_path / "keep.jsonl"
    out.write_text("precious\n")
    one_line_error(cli("record", "--out", str(out), *FAST, "--sectors", "1"), 2, "use --force")
    assert out.read_text() == "precious\n"
    with pytest.raises(RecordingError, match="use --force"):
        RecordingWriter(out, RecordingHeader())


def test_second_writer_fails_and_leaves_the_first_intact(tmp_path: Path) -> None:
    out = tmp_path / "one.jsonl"
    with RecordingWriter(out, RecordingHeader()) as w:
        w.write(ev.Note(t=0.0, text="first"))
        w.flush()
        with pytest.raises(RecordingError, match="being written by another process"):
            RecordingWriter(out, RecordingHeader(), force=True)
        w.write(ev.Note(t=0.1, text="second"))
    rec = read_recording(out)
    assert rec.error is None and [e.text for e in rec.events] == ["first", "second"]


def test_removed_directory_is_an_error_in_the_os_words(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    w = RecordingWriter(d / "x.jsonl", RecordingHeader())
    w.write(ev.Note(t=0.0, text="a"))
    w.flush()
    shutil.rmtree(d)
    w.write(ev.Note(t=0.1, text="b"))
    time.sleep(0.4)
    w.close()
    assert w.error is not None and "No such file or directory" in w.error


def test_full_disk_keeps_a_readable_prefix(tmp_path: Path) -> None:
    """ENOSPC mid-run: the writer cuts the file back to its last whole batch (simulated with a
    file-size limit, which fails writes the same way a full disk does: EFBIG here)."""
    import resource

    out = tmp_path / "full.jsonl"
    code = (
        "import resource, signal, time\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))\n"
        "from prover import events as ev\n"
        "from prover.record import RecordingHeader, RecordingWriter\n"
        f"w = RecordingWriter({str(out)!r}, RecordingHeader())\n"
        "for i in range(2000):\n"
        "    w.write(ev.Note(t=i * 1e-3, text='x' * 50))\n"
        "    if i % 100 == 0: time.sleep(0.11)\n"
        "w.close()\n"
        "print(w.error)\n"
    )
    _ = resource
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert "File too large" in res.stdout, res.stdout + res.stderr
    rec = read_recording(out)
    assert rec.error is None and 0 < len(rec.events) < 2000  # whole lines only


@pytest.mark.timeout(90)
def test_record_with_its_directory_removed_exits_3(tmp_path: Path) -> None:
    d = tmp_path / "gone"
    d.mkdir()
    out = d / "run.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--out", str(out), *FAST, "-q"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (out.exists() and out.stat().st_size > 2000):
        time.sleep(0.1)
    shutil.rmtree(d)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err.decode()
    assert b"No such file or directory" in err and b"Traceback" not in err


# readers --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("edit", "needle"), [
    ({"gpus": 10**9}, "claims 1000000000 GPUs"),
    ({"schema_version": 99}, "unknown schema version 99"),
])
def test_implausible_run_started_is_an_error_not_a_hang(tmp_path: Path, edit: dict, needle: str) -> None:
    lines = TWO_GPUS.read_text().splitlines()
    lines[1] = _started(**edit)
    p = _recording(tmp_path, lines)
    t0 = time.monotonic()
    one_line_error(cli("summary", str(p)), 2, needle)
    out = tmp_path / "s.svg"
    one_line_error(cli("screenshot", str(p), "--at", "5", "-o", str(out)), 2, needle)  # no valid event to draw
    assert time.monotonic() - t0 < 60


def test_infinite_or_reordered_times_are_errors(tmp_path: Path) -> None:
    lines = TWO_GPUS.read_text().splitlines()
    bad = lines[:5] + [re.sub(r'"t": ?[0-9.e+-]+', '"t": 1e999', lines[5], count=1)]
    assert "1e999" in bad[5]
    one_line_error(cli("summary", str(_recording(tmp_path, bad))), 2, "line 6: time t=inf is not finite")
    rec = read_recording(_recording(tmp_path, lines[:1] + lines[1:][::-1]))
    assert rec.error is not None and "out of order" in rec.error
    t_inf = json.loads(lines[5])
    t_inf["t"] = float("inf")
    rec = read_recording(_recording(tmp_path, lines[:5] + [json.dumps(t_inf)]))
    assert "not finite" in (rec.error or "")


def test_dev_zero_is_bounded(tmp_path: Path) -> None:
    one_line_error(cli("summary", "/dev/zero"), 2, "not a regular file")  # refused before a byte is read
    one_line_error(cli("record", "--out", str(tmp_path / "z.jsonl"), "--config", "/dev/zero", *FAST), 2, "not a regular file")


def test_committed_recordings_still_read() -> None:
    for p in [*sorted((ROOT / "benchmarks" / "recordings").rglob("*.jsonl")), *sorted(TWO_GPUS.parent.glob("*.jsonl"))]:
        assert read_recording(p).error is None, p


# options ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "needle"), [
    (["prove", "--constraints-log2", "8", "--seed", "-1", "--out", "OUT"], "--seed"),
    (["prove", "--constraints-log2", "8", "--instance", "-1", "--out", "OUT"], "--instance"),
    (["prove", "--constraints-log2", "8", "--out", "FILE/sub"], "--out"),
    (["prove", "--constraints-log2", "8", "--out", "OUT", "--cache-dir", "FILE/keys"], "--cache-dir"),
    (["replay", "REC", "--fps", "0"], "fps"),
    (["replay", "REC", "--fps", "-1"], "fps"),
    (["replay", "REC", "--fps", "nan"], "fps"),
    (["replay", "REC", "--fps", "inf"], "fps"),
    (["replay", "REC", "--at", "nan"], "--at"),
    (["replay", "REC", "--at", "-5"], "--at"),
    (["screenshot", "REC", "--at", "nan", "-o", "OUT/x.svg"], "--at"),
    (["screenshot", "REC", "--at", "1", "-o", "OUT/missing/x.svg"], "does not exist"),
    (["record", "--out", "OUT/r.jsonl", "--drain-timeout", "nan", "--duration", "1"], "--drain-timeout"),
    (["record", "--out", "OUT/r.jsonl", "--drain-timeout", "-1", "--duration", "1"], "--drain-timeout"),
    (["record", "--out", "OUT/r.jsonl", "--drain-timeout", "inf", "--duration", "1"], "--drain-timeout"),
    (["record", "--out", "OUT/r.jsonl", "--switch", "nan:pause", "--duration", "1"], "AT must be finite"),
    (["record", "--out", "OUT/r.jsonl", "--duration", "nan"], "--duration"),
    (["record", "--out", "OUT/r.jsonl", "--duration", "inf"], "--duration"),
    (["record", "--out", "OUT/r.jsonl", "--config", "SECTORS", "--duration", "1"], "not both"),
    # click's FloatRange lets nan through (every comparison with it is false): these ran with it
    (["summary", "REC", "--window", "nan"], "--window"),
    (["compare", "REC", "REC", "--window", "nan", "--text"], "--window"),
    (["compare", "REC", "REC", "--step", "nan", "--text"], "--step"),
    (["compare", "REC", "REC", "--step", "inf", "--text"], "--step"),
    (["compare", "REC", "REC", "--at", "nan", "-o", "OUT/c.svg"], "--at"),
    (["record", "--out", "OUT/r.jsonl", "--metrics-linger", "nan", "--duration", "1"], "--metrics-linger"),
])
def test_bad_values_are_usage_errors(tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "FILE").write_text("x")
    (tmp_path / "SECTORS.toml").write_text("sectors = 2\n")
    subst = {"OUT": str(tmp_path / "out"), "REC": str(TWO_GPUS), "SECTORS": str(tmp_path / "SECTORS.toml")}
    (tmp_path / "out").mkdir()
    args = [subst.get(a, a.replace("OUT", subst["OUT"]).replace("FILE", str(tmp_path / "FILE"))) for a in args]
    one_line_error(cli(*args), 2, needle)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []  # nothing written


def test_screenshot_to_dev_full_is_clear(tmp_path: Path) -> None:
    one_line_error(cli("screenshot", str(TWO_GPUS), "--at", "1", "-o", "/dev/full"), 2, "is a device node")


@pytest.mark.timeout(60)
def test_sigterm_interrupted_run_exits_non_zero(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--out", str(out), *FAST, "-q"], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (out.exists() and out.read_text().count('"partition_done"') >= 1):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3 and b"interrupted" in err
    assert read_recording(out).error is None
