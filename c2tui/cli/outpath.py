"""The one output-path policy of every command that writes a file (record, run --record,
export, screenshot, prove):

- the target must be a regular file or not exist yet: a device node, a FIFO, a socket or a
  directory is refused (as root, `-o /dev/null` would otherwise replace /dev/null);
- a symbolic link is refused, never followed or replaced;
- an existing file is refused unless --force;
- its directory must exist and be writable (a read-only file system is said up front).
A refusal is a usage error (exit 2); a write that fails midway (no space, I/O error) is one
line naming the OS's words, exit 3, and leaves the target as it was (written whole or not
at all, through a temporary beside it). '-' means stdout where a command takes it.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Callable, cast

import click

from c2tui.cli.exits import RUN, fail

_KINDS = ((stat.S_ISDIR, "is a directory"), (stat.S_ISCHR, "is a device node, not a file"),
          (stat.S_ISBLK, "is a device node, not a file"), (stat.S_ISFIFO, "is a FIFO, not a file"),
          (stat.S_ISSOCK, "is a socket, not a file"))


def problem(path: Path, *, force: bool) -> str | None:
    """Why `path` may not be written as an output file, or None."""
    if not str(path).strip():
        return "an empty path: name a file"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        return f"{path}: cannot be checked ({exc.strerror or exc})"
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            return f"{path}: is a symbolic link (refusing to write through it; name its target)"
        for test, what in _KINDS:
            if test(st.st_mode):
                return f"{path}: {what}"
        if not force:
            return f"{path} exists: refusing to overwrite it (use --force)"
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        return f"{path}: directory {parent} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK):
        ro = _read_only(parent)
        return f"{path}: directory {parent} is {'on a read-only file system' if ro else 'not writable'}"
    return None


def _read_only(d: Path) -> bool:
    try:
        return bool(os.statvfs(d).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def check(path: Path, what: str, *, force: bool = False) -> Path:
    """`path` as an output file under the policy; a usage error (exit 2) naming `what` otherwise."""
    why = problem(path, force=force)
    if why is not None:
        raise click.BadParameter(why, param_hint=what)
    return path


def write_stdout(data: bytes) -> None:
    """'-': the bytes to stdout's binary stream as click finds it (a pipe, a CliRunner's, a
    closed stdout's stand-in, whose write fails in one line). click 8.2 declares
    get_binary_stream through its module's __getattr__, untyped: typed here, once."""
    stream = cast(Callable[[str], BinaryIO], getattr(click, "get_binary_stream"))("stdout")
    stream.write(data)


def write_whole(path: Path, data: bytes, *, force: bool = False) -> None:
    """Write `data` to `path` whole or not at all: a temporary beside it (created exclusively,
    never through a link), then linked into place (no --force: fails if something appeared
    meanwhile) or renamed over the regular file (--force). A failure is one line, exit 3."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if force:
            os.replace(tmp, path)  # rename never follows a link at `path`: it replaces the name
        else:
            _link(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if exc.errno == errno.EEXIST:
            fail(f"cannot write {path}: it appeared while writing (use --force to replace it)", RUN)
        fail(f"cannot write {path}: {exc.strerror or exc}", RUN)



def _link(tmp: Path, path: Path) -> None:
    """Put `tmp` at `path` only if nothing is there (a hard link fails on EEXIST); where the
    file system has no hard links, look once more and rename."""
    try:
        os.link(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "exists") from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)
