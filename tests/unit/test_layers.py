"""The arrow points one way: importing every prover module pulls in neither c2tui nor textual."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_prover_never_imports_the_ui() -> None:
    code = (
        "import importlib, pkgutil, sys, prover\n"
        "for m in pkgutil.walk_packages(prover.__path__, 'prover.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('c2tui', 'textual'))\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
