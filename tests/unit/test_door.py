"""The door into prover (prover/__init__.py): what runs (the lazy `_EXPORTS`, `_MODULES`,
`_RENAMED`) and what tools read (the imports under TYPE_CHECKING) are the same surface, and
`import prover` stays lazy (issue 32)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import prover

ROOT = Path(__file__).resolve().parents[2]


def _typed() -> dict[str, tuple[str, str]]:
    """Each name imported under `if TYPE_CHECKING:` -> (module, attribute)."""
    tree = ast.parse((ROOT / "prover" / "__init__.py").read_text())
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.unparse(imp)
                for a in imp.names:
                    assert a.asname, f"{ast.unparse(imp)}: say `X as X` (an explicit re-export)"
                    out[a.asname] = (imp.module, a.name)
    return out


def _runtime() -> dict[str, tuple[str, str]]:
    """The same from the tables the door's __getattr__ reads (a whole module: its parent, its name)."""
    out = {n: (m, n) for n, m in prover._EXPORTS.items()}
    out.update({n: tuple(m.rsplit(".", 1)) for n, m in prover._MODULES.items()})  # type: ignore[misc]
    out.update({n: (m, a) for n, (m, a) in prover._RENAMED.items()})
    return out


def test_the_typed_imports_and_the_export_table_name_the_same_surface() -> None:
    typed, runtime = _typed(), _runtime()
    missing = [f"    from {m} import {a} as {n}" for n, (m, a) in sorted(runtime.items()) if typed.get(n) != (m, a)]
    extra = sorted(n for n in typed if n not in runtime)
    assert not missing, "prover/__init__.py: add under `if TYPE_CHECKING:`\n" + "\n".join(missing)
    assert not extra, f"prover/__init__.py: under TYPE_CHECKING but not in the export tables: {extra}"
    assert sorted(runtime) == sorted(prover.__all__)


def test_every_name_of_the_door_is_the_object_its_typed_import_names() -> None:
    import importlib

    for name, (module, attr) in _typed().items():
        mod = importlib.import_module(module)
        want = getattr(mod, attr) if hasattr(mod, attr) else importlib.import_module(f"{module}.{attr}")
        assert getattr(prover, name) is want, name


def test_import_prover_stays_lazy() -> None:
    code = "import prover, sys; print(sorted(m for m in sys.modules if m.startswith('prover.')))"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr
