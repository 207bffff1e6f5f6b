"""`c2tui serve` options, without a browser: what it runs per tab and its clear errors."""
from __future__ import annotations

import socket
import sys

from click.testing import CliRunner

from c2tui.commands import main
from c2tui.commands.serve import run_argv


def test_run_argv_forwards_only_given_options():
    argv = run_argv("light", 5.0, backend="sim", workers_per_gpu=2, prestage=False, lock_mode=None, metrics_port=1)
    assert argv[:4] == [sys.executable, "-m", "c2tui", "run"]
    assert argv[4:] == ["--backend", "sim", "--no-prestage", "--workers-per-gpu", "2", "--theme", "light", "--fps", "5"]


def test_bad_run_options_fail_before_serving():
    r = CliRunner().invoke(main, ["serve", "--workers-per-gpu", "0", "--port", "1"])
    assert r.exit_code == 2 and "workers_per_gpu" in r.output


def test_busy_port_is_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = CliRunner().invoke(main, ["serve", "--backend", "sim", "--port", str(port)])
    assert r.exit_code == 2 and f"cannot serve on 127.0.0.1:{port}" in r.output and "Traceback" not in r.output
