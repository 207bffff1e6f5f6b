"""`c2tui serve` in a real headless Chromium (Debian's chromium, driven by playwright from
PyPI; no browser download): the page shows the dashboard, and a key press typed into the
page changes the header (`l` turns the lock mode to the registry's next discipline after two-lock).

The terminal is drawn on a canvas (xterm.js), so the text is read from the bytes the page
receives over its websocket (the same bytes the terminal draws), and a screenshot is kept.
Set C2TUI_SERVE_SCREENSHOT=PATH to keep the screenshot there (docs/serve-chromium.png).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prover.knobs import KNOBS

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]")

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium); "
                                                "the browser test needs the system browser"),
    pytest.mark.timeout(180),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "serve exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"serve did not listen on {port}")


NEXT = KNOBS["lock_mode"].next_value("two-lock")  # what `l` turns two-lock into (the disciplines' order)


class Screen:
    """Text the page has been sent, escape sequences stripped."""

    def __init__(self) -> None:
        self.raw = bytearray()

    def frame(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            self.raw += payload

    def text(self, since: int = 0, until: int | None = None) -> str:
        return ANSI.sub(b"", bytes(self.raw[since:until])).decode("utf-8", "replace")

    def wait_for(self, page, needle: str, since: int = 0, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text(since):
            assert time.monotonic() < deadline, f"{needle!r} never shown; got: {self.text(since)[-600:]!r}"
            page.wait_for_timeout(200)


@pytest.mark.slow
def test_serve_in_headless_chromium(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (PyPI) not installed")
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    serve = subprocess.Popen([sys.executable, "-m", "c2tui", "serve", "--backend", "sim", "--constraints-log2", "8",
                              "--time-scale", "0.3", "--partitions", "6", "--lock-mode", "two-lock",
                              "--port", str(port)], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_port(port, serve)
        screen = Screen()
        with sync_api.sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                        args=ARGS, headless=True, viewport={"width": 1400, "height": 900})
            try:
                page = ctx.new_page()
                page.on("websocket", lambda ws: ws.on("framereceived", screen.frame))
                page.goto(f"http://127.0.0.1:{port}/")
                screen.wait_for(page, "lock two-lock")
                screen.wait_for(page, "SIMULATED")
                mark = len(screen.raw)
                assert f"lock {NEXT}" not in screen.text(0, mark)
                page.locator(".xterm-screen").click()
                page.keyboard.press("l")
                screen.wait_for(page, f"lock {NEXT}", since=mark, timeout=30)
                page.wait_for_timeout(1500)  # let the frames settle before the shot
                shot = Path(os.environ.get("C2TUI_SERVE_SCREENSHOT") or tmp_path / "serve.png")
                page.screenshot(path=str(shot))
                assert shot.stat().st_size > 10_000
            finally:
                ctx.close()
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=20)
        except subprocess.TimeoutExpired:
            serve.kill()
