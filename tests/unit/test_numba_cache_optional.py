"""numba's cache is optional (issue 35): a user for whom numba finds no place to cache (no
writable __pycache__ beside the sources, no user cache directory) still verifies and proves:
the kernels compile without a cache, and that is said once. Before, every numba module
raised at import: "cannot cache function ...: no locator available"."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main

ROOT = Path(__file__).resolve().parents[2]
# numba's own switch for the places it may cache in: only beside zip-imported sources, so
# none for us, as for a user who can write neither site-packages nor a home directory
NO_PLACE = {"NUMBA_CACHE_LOCATOR_CLASSES": "ZipCacheLocator"}


@pytest.mark.timeout(300)
def test_verify_without_a_numba_cache(tmp_path: Path) -> None:
    out = tmp_path / "proof"
    res = CliRunner().invoke(main, ["prove", "--constraints-log2", "8", "--seed", "1", "--out", str(out),
                                    "--cache-dir", str(tmp_path / "keys")])
    assert res.exit_code == 0, res.output
    env = {**os.environ, **NO_PLACE, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "c2tui", "verify", str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and r.stderr.count("numba cannot cache") == 1, r.stderr
    assert "NUMBA_CACHE_DIR" in r.stderr


def test_the_cache_stays_on_where_numba_can_keep_one() -> None:
    from prover.field import jit

    assert jit.cache_on() and jit.reason is None
