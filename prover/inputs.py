"""Every file a command is given to read goes through here: a regular file only, and never
more than its bound (prover/bounds.py).

A FIFO, a device (/dev/zero), a socket or a directory is refused before any read could block
or run away: the path is opened with O_NONBLOCK (a FIFO without a writer opens at once
instead of waiting for one) and its type checked on the open descriptor, so nothing can be
swapped in between the check and the read. Then at most `limit` bytes are read, and one
more is an error, never a MemoryError. Readers turn InputError into their own error type
(ConfigError, MalformedInput, RecordingError, AttachError, a usage error).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from prover import bounds

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class InputError(ValueError):
    """An input file that cannot be read as one: str() is the one line that says why."""


def open_input(path: str | Path, what: str = "file") -> BinaryIO:
    """`path` opened for reading, binary, if it is a regular file; InputError otherwise."""
    p = str(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise InputError(f"{what} {p} is {kind}, not a regular file: refused (it could block or never end)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input(path: str | Path, limit: int, what: str = "file") -> bytes:
    """The whole of a regular file of at most `limit` bytes (bounds.over when larger)."""
    with open_input(path, what) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise InputError(f"{what} {path}: " + bounds.over("size in bytes", size, limit))
            data = f.read(limit + 1)  # the file may grow after the fstat
        except OSError as exc:
            raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(f"{what} {path}: " + bounds.over("size in bytes", f"over {limit}", limit))
    return data
