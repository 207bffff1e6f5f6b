"""One output-path policy (c2tui/cli/outpath.py) for every command that writes: a device node,
a FIFO, a directory or a symlink is refused (never replaced, never written through), an
existing file only replaced with --force, and a full target is one line, exit 3."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main

ROOT = Path(__file__).resolve().parents[2]
REC = str(ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl")
FAST = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05", "--sectors", "1", "-q"]
WRITERS = {  # command line with OUT for the path it writes
    "export": ["export", REC, "-o", "OUT"],
    "screenshot": ["screenshot", REC, "--at", "1", "--size", "80x24", "-o", "OUT"],
    "record": ["record", "--out", "OUT", *FAST],
    "run": ["run", "--record", "OUT", "--backend", "sim"],
    "compare": ["compare", REC, REC, "-o", "OUT"],
}


def _cli(args: list[str], out: Path):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, [str(out) if a == "OUT" else a for a in args])


def _refused(r, needle: str, code: int = 2) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(r.output.split())
    assert r.exit_code == code and "Traceback" not in r.output and needle in text, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)


def _targets(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    fifo = tmp_path / "fifo.svg"
    os.mkfifo(fifo)
    target = tmp_path / "precious.svg"
    target.write_text("precious\n")
    link = tmp_path / "link.svg"
    link.symlink_to(target)
    d = tmp_path / "dir.svg"
    d.mkdir()
    out = {"fifo": (fifo, "is a FIFO"), "symlink": (link, "is a symbolic link"), "dir": (d, "is a directory"),
           "existing": (target, "use --force")}
    if os.geteuid() == 0:  # a character device of our own (the null device's numbers), not /dev/null itself
        dev = tmp_path / "null.svg"
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        out["device"] = (dev, "is a device node")
    return out


@pytest.mark.parametrize("cmd", sorted(WRITERS))
def test_every_writer_refuses_what_is_not_a_new_regular_file(cmd: str, tmp_path: Path) -> None:
    for name, (path, needle) in _targets(tmp_path).items():
        before = os.lstat(path)
        _refused(_cli(WRITERS[cmd], path), needle)
        after = os.lstat(path)
        assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino), name  # not replaced
    assert (tmp_path / "precious.svg").read_text() == "precious\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries left


def test_prove_refuses_a_fifo_in_its_directory(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "proof.json")
    r = CliRunner().invoke(main, ["prove", "--constraints-log2", "8", "--out", str(tmp_path), "--cache-dir", str(tmp_path / "k")])
    _refused(r, "is a FIFO")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "proof.json").st_mode)


def test_force_replaces_a_regular_file_and_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "t.csv"
    target.write_text("old\n")
    r = _cli(["export", REC, "--format", "csv", "-o", "OUT", "--force"], target)
    assert r.exit_code == 0 and target.read_text().startswith("part") or target.read_text() != "old\n"
    link = tmp_path / "l.csv"
    link.symlink_to(target)
    _refused(_cli(["export", REC, "--format", "csv", "-o", "OUT", "--force"], link), "symbolic link")
    assert link.is_symlink()


def test_a_full_target_is_one_line_exit_3_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if os.fstat(fd).st_size > 100:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data[:64])

    monkeypatch.setattr(os, "write", full)
    out = tmp_path / "trace.json"
    _refused(_cli(WRITERS["export"], out), "No space left on device", code=3)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_directory_is_said_up_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from c2tui.cli import outpath

    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: not mode & os.W_OK and real_access(p, mode, **k))
    monkeypatch.setattr(outpath, "_read_only", lambda d: True)
    _refused(_cli(WRITERS["export"], tmp_path / "x.json"), "read-only file system")
