"""The doors into prover (prover/__init__.py, and prover/experiment/__init__.py, the
experiments' door c2tui reaches as `prover.experiment`): what runs (the lazy `_EXPORTS`,
`_MODULES`, `_RENAMED`) and what tools read (the imports under TYPE_CHECKING) are the same
surface, and `import prover` stays lazy (issues 32, 43)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOORS = ("prover", "prover.experiment")


def _typed(door: str = "prover") -> dict[str, tuple[str, str]]:
    """Each name imported under `if TYPE_CHECKING:` -> (module, attribute)."""
    tree = ast.parse((ROOT / door.replace(".", "/") / "__init__.py").read_text())
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.unparse(imp)
                for a in imp.names:
                    assert a.asname, f"{ast.unparse(imp)}: say `X as X` (an explicit re-export)"
                    out[a.asname] = (imp.module, a.name)
    return out


def _runtime(door: str = "prover") -> dict[str, tuple[str, str]]:
    """The same from the tables the door's __getattr__ reads (a whole module: its parent, its name;
    a module named without a dot: one of the door's own package)."""
    import importlib

    mod = importlib.import_module(door)
    out = {n: (m if "." in m else f"{door}.{m}", n) for n, m in mod._EXPORTS.items()}
    out.update({n: tuple(m.rsplit(".", 1)) for n, m in getattr(mod, "_MODULES", {}).items()})
    out.update({n: (m, a) for n, (m, a) in getattr(mod, "_RENAMED", {}).items()})
    return out


@pytest.mark.parametrize("door", DOORS)
def test_the_typed_imports_and_the_export_table_name_the_same_surface(door: str) -> None:
    import importlib

    typed, runtime = _typed(door), _runtime(door)
    init = door.replace(".", "/") + "/__init__.py"
    missing = [f"    from {m} import {a} as {n}" for n, (m, a) in sorted(runtime.items()) if typed.get(n) != (m, a)]
    extra = sorted(n for n in typed if n not in runtime)
    assert not missing, f"{init}: add under `if TYPE_CHECKING:`\n" + "\n".join(missing)
    assert not extra, f"{init}: under TYPE_CHECKING but not in the export tables: {extra}"
    assert sorted(runtime) == sorted(importlib.import_module(door).__all__)


@pytest.mark.parametrize("door", DOORS)
def test_every_name_of_the_door_is_the_object_its_typed_import_names(door: str) -> None:
    import importlib

    face = importlib.import_module(door)
    for name, (module, attr) in _typed(door).items():
        mod = importlib.import_module(module)
        want = getattr(mod, attr) if hasattr(mod, attr) else importlib.import_module(f"{module}.{attr}")
        assert getattr(face, name) is want, name


def test_import_prover_stays_lazy() -> None:
    code = "import prover, sys; print(sorted(m for m in sys.modules if m.startswith('prover.')))"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr
