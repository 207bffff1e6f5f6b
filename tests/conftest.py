"""Session-wide test settings."""
from __future__ import annotations

import os
import signal
import tempfile

import pytest

# the dashboard keeps its theme and layout in the user's config dir (c2tui/dashboard/prefs.py): tests,
# and the commands they run in subprocesses, keep theirs in a directory of their own instead
os.environ.setdefault("C2TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="c2tui-test-prefs-"))

# A parent that ignores SIGINT (a CI runner, `nohup`, a shell's background job) passes the
# ignore on through exec, and Python then installs no KeyboardInterrupt handler: the tests that
# stop a `c2tui record` with SIGINT waited out their timeouts (issue 42). The test process takes
# SIGINT back (Python's own handler), so every process it starts begins with the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def warm_numba_cache() -> None:
    """Compile the host kernels once, into numba's on-disk cache, before a test starts other
    processes (Ray hosts) on a clock: on a fresh clone each host compiled them again inside its
    start-up (~20 s on CI's two cores), past a `--duration 8.5` run, which then proved nothing."""
    from prover.groth16 import warm

    warm.warm_up()


def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, the controller fills numba's on-disk cache before the workers start: the
    slow tests run first (below), and on a fresh clone each of their subprocesses (a recorder,
    Ray hosts, a tune's prover) compiled the host kernels at once on CI's two cores, so a run
    with a `--duration` lost its first half minute to compiling (the attach end-to-end test's
    prover ran out of time). Once here, every process after loads the cache (~0.5 s)."""
    if getattr(config, "workerinput", None) is None and config.getoption("numprocesses", default=None):
        from prover.groth16 import warm

        warm.warm_up()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The `slow` tests first (a stable sort: the rest keep their order). Under two workers a
    minute-long test drawn last kept one worker busy while the other sat idle: started first,
    the short tests fill the other worker around them (CI's wall time, not its work)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
