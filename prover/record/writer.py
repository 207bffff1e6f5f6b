"""Writing a recording: events are enqueued by the engine's threads and written on the writer's
own thread, in batches, at least every ~100 ms and on close, so a crash leaves a readable
prefix (one whose header could not be written is removed). An existing file is replaced only
when asked (`force=True`), under an exclusive lock (flock) so a second writer fails at once
instead of interleaving; a write error is kept in `error` in the OS's words and the file cut
back to the last whole batch."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from prover.record.format import FLUSH_EVERY_S, RecordingError, RecordingHeader, _dump_line


class RecordingWriter:
    """Thread-safe JSONL writer; `write` only enqueues (safe to call from engine threads)."""

    def __init__(self, path: str | Path, header: RecordingHeader | None = None, flush_every: float = FLUSH_EVERY_S,
                 force: bool = False) -> None:
        self.path = Path(path)
        self.header = header or RecordingHeader()
        self.flush_every = flush_every
        self._fd = _open_locked(self.path, force)
        self._ino = os.fstat(self._fd).st_ino
        self._good = 0  # bytes known to be whole lines on disk
        try:
            self._write_all(self.header.model_dump_json().encode() + b"\n")
        except OSError as exc:  # (a full disk): no 0-byte file left to block the retry without --force
            with contextlib.suppress(OSError):
                os.unlink(self.path) if os.stat(self.path).st_ino == self._ino else None
            os.close(self._fd)
            raise RecordingError(f"cannot write recording {self.path}: {exc.strerror or exc}") from None
        self._q: deque[Any] = deque()
        self._wake = threading.Event()
        self._closing = False
        self._closed = False
        self.error: str | None = None
        self.written = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._loop, name="recording-writer", daemon=True)
        self._thread.start()

    # --- producer side -------------------------------------------------------------------
    def write(self, event: Any) -> None:
        if self._closed or self.error is not None:
            self.dropped += 1
            return
        self._q.append(event)
        if len(self._q) > 4096:
            self._wake.set()

    __call__ = write

    # --- writer thread --------------------------------------------------------------------
    def _loop(self) -> None:
        last_flush = time.monotonic()
        while True:
            self._wake.wait(self.flush_every / 2)
            self._wake.clear()
            closing = self._closing
            self._drain()
            now = time.monotonic()
            if self.error is None and (now - last_flush >= self.flush_every or closing):
                self._check_still_there()
                last_flush = now
            if closing and not self._q:
                return

    def _drain(self) -> None:
        q = self._q
        dump = _dump_line
        while q:
            n = min(len(q), 4096)
            pop = q.popleft
            lines = [dump(pop()) for _ in range(n)]
            if self.error is not None:
                self.dropped += n
                continue
            try:
                self._write_all(b"\n".join(lines) + b"\n")
                self.written += n
            except OSError as exc:
                self.dropped += n
                self._fail(exc)

    def _write_all(self, data: bytes) -> None:
        """Write a whole batch; on an error cut the file back to the last whole batch."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError:
            if stat.S_ISREG(os.fstat(self._fd).st_mode):
                try:
                    os.ftruncate(self._fd, self._good)
                    os.lseek(self._fd, self._good, os.SEEK_SET)
                except OSError:
                    pass
            raise
        self._good += len(data)

    def _check_still_there(self) -> None:
        """Writes to a removed file (or one in a removed directory) succeed and are lost."""
        try:
            if os.stat(self.path).st_ino != self._ino:
                raise OSError(errno.ENOENT, "the file was replaced by another")
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        if self.error is None:
            self.error = f"writing {self.path} failed: {exc.strerror or exc}"

    def flush(self, timeout: float = 5.0) -> None:
        """Block until everything enqueued so far is written (each batch goes straight to the OS)."""
        deadline = time.monotonic() + timeout
        while self._q and time.monotonic() < deadline and self._thread.is_alive():
            self._wake.set()
            time.sleep(0.002)

    def close(self) -> None:
        if self._closed:
            return
        self._closing = True
        self._wake.set()
        self._thread.join(timeout=30)
        self._closed = True
        try:
            os.close(self._fd)  # releases the lock too
        except OSError as exc:
            self._fail(exc)

    def __enter__(self) -> "RecordingWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _open_locked(path: Path, force: bool) -> int:
    """Open for writing under an exclusive lock; truncate only once the lock is ours, so a
    second writer (with or without force) never damages the first one's file."""
    # never through a symbolic link, never a device or FIFO (c2tui/cli/outpath.py says the same
    # up front; this holds for every caller, and against a swap between check and open)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | (0 if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise RecordingError(f"{path} exists: refusing to overwrite it (use --force)") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RecordingError(f"{path}: is a symbolic link (refusing to write through it)") from None
        raise RecordingError(f"cannot write recording {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RecordingError(f"{path}: not a regular file (a device, FIFO or socket): refusing to write a recording there")
    os.set_blocking(fd, True)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise RecordingError(f"{path} is being written by another process (it holds the lock)") from None
        raise RecordingError(f"cannot lock recording {path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(os.fstat(fd).st_mode):
        os.ftruncate(fd, 0)
    return fd
