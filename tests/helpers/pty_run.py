"""Run a command in a pseudo-terminal of a fixed size, as an operator would: its screen bytes
are read as they come (a full pty would block it), keys are sent at given times, and the
run ends at a deadline. A key's moment is a time or a condition (typed once it holds: the
event the test needs, not a guess at how long it takes). For the real dashboard in tests that
need no tmux."""
from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time
from dataclasses import dataclass
from typing import Callable


@dataclass
class PtyResult:
    output: bytes
    code: int | None  # None: killed at the deadline
    seconds: float


When = float | Callable[[], bool]
Action = bytes | int  # bytes typed, or a signal sent to the process (signal.SIGTERM, ...)


def _due(when: When, now: float) -> bool:
    return when() if callable(when) else when <= now


def run_in_pty(argv: list[str], keys: list[tuple[When, Action]], deadline: float,
               size: tuple[int, int] = (160, 50), env: dict[str, str] | None = None,
               screen: bytearray | None = None) -> PtyResult:
    """argv in a pty of `size` (columns, rows); each (when, action) of `keys`, in order, is typed
    (bytes) or sent (a signal number) at `when` seconds or once `when()` holds (polled every
    0.1 s); waits for the exit until `deadline` seconds, then kills the process group. `screen`:
    the buffer the output goes to (a condition may read it: "once drawn")."""
    # the pty's size is the terminal's: COLUMNS / LINES left in the environment (the snapshot
    # plugin sets 80x24 in a test worker's) would override it, and Textual draws at 80x24
    env = {k: v for k, v in (env if env is not None else os.environ).items() if k not in ("COLUMNS", "LINES")}
    pid, fd = pty.fork()
    if pid == 0:  # the child: its own session, the pty its terminal
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    os.kill(pid, signal.SIGWINCH)
    out, start, todo, code = (screen if screen is not None else bytearray()), time.monotonic(), list(keys), None
    try:
        while True:
            now = time.monotonic() - start
            while todo and _due(todo[0][0], now):
                action = todo.pop(0)[1]
                if isinstance(action, int):
                    os.kill(pid, action)
                else:
                    os.write(fd, action)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if now > deadline:
                break
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    out += os.read(fd, 1 << 16)
                except OSError:  # the child closed its side
                    pass
    finally:
        if code is None:
            try:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        try:
            while select.select([fd], [], [], 0)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass
        os.close(fd)
    return PtyResult(bytes(out), code, time.monotonic() - start)
