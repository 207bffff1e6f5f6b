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


def test_c2tui_reaches_prover_through_its_public_surface() -> None:
    """c2tui imports names from `prover` (its __all__) and never a module inside it, so the
    prover's insides can move without touching the UI (issue 23)."""
    import ast

    import prover

    deep, unknown = [], []
    for path in sorted((ROOT / "c2tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "prover":
                if node.module != "prover":
                    deep.append(f"{path.relative_to(ROOT)}:{node.lineno} from {node.module}")
                unknown += [f"{path.relative_to(ROOT)}:{node.lineno} {a.name}" for a in node.names
                            if a.name not in prover.__all__]
            elif isinstance(node, ast.Import):
                deep += [f"{path.relative_to(ROOT)}:{node.lineno} import {a.name}" for a in node.names
                         if a.name.split(".")[0] == "prover"]
    assert deep == [] and unknown == [], deep + unknown


def test_no_package_cycle_in_prover() -> None:
    """No import cycle between prover's parts, and kernels/ imports nothing from groth16/ or
    pipeline/ (the shared tool: ast only, module-level and in-function imports alike)."""
    script = ROOT / "tests" / "helpers" / "pkg_graph.py"  # the team's pkg-graph tool, vendored for CI
    res = subprocess.run([sys.executable, str(script), str(ROOT)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_files_and_functions_stay_small() -> None:
    """No Python file over 450 lines, no function over 80, outside benchmarks/ (issue 23)."""
    import ast

    long_files, long_fns = [], []
    for part in ("prover", "c2tui", "tests"):
        for path in sorted((ROOT / part).rglob("*.py")):
            text = path.read_text()
            if text.count("\n") > 450:
                long_files.append(str(path.relative_to(ROOT)))
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80:
                    long_fns.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert long_files == [] and long_fns == [], long_files + long_fns


def test_no_import_circle_between_files_in_prover() -> None:
    """No two files of prover/ import each other round a loop, TYPE_CHECKING and in-function
    imports included (tests/helpers/module_graph.py; it finds the fleet's old control <->
    driver circle on the tree before 72ce4a0)."""
    from tests.helpers.module_graph import circles

    assert circles() == []


def test_no_arrow_runs_back_up_a_room() -> None:
    """Inside every package of prover/, its rooms (modules and sub-packages) import each other
    one way only: a module in pipeline/gpu/ may not import a pipeline module that imports
    gpu/ back (issue 43)."""
    from tests.helpers.module_graph import room_circles

    assert room_circles() == {}


def test_the_pipelines_root_holds_at_most_fourteen_modules() -> None:
    """prover/pipeline/ keeps its rooms by job (gpu/, queue/, keys/, control/); its root holds
    the engine, the flow and what wires them (issue 43: 27 flat modules before)."""
    root = sorted(p.name for p in (ROOT / "prover" / "pipeline").glob("*.py"))
    assert len(root) <= 14, root


def test_the_statistics_are_a_leaf_and_the_fold_stands_below_the_experiments() -> None:
    """prover/stats/ imports nothing of prover (the fold and the experiments both stand on it),
    and prover/fold/ imports nothing of prover/experiment/ (which drives a live engine): issue 43."""
    import ast

    def imports(part: str) -> set[str]:
        found: set[str] = set()
        for path in (ROOT / "prover" / part).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("prover"):
                    found.add(node.module)
                elif isinstance(node, ast.Import):
                    found |= {a.name for a in node.names if a.name.startswith("prover")}
        return found

    assert {m for m in imports("stats") if not m.startswith("prover.stats")} == set()
    assert {m for m in imports("fold") if m.startswith("prover.experiment")} == set()


# c2tui's rooms, from the top floor down: a room imports only rooms on a floor below its own
# (issue 43). cli/, sources/ and widgets/ import nothing of c2tui; text/ stands on widgets/
# (the OOM words) and cli/ (a report's file); the dashboard on sources/, widgets/ and cli/.
C2TUI_FLOORS = (("__main__",), ("commands",), ("dashboard", "text"), ("cli", "sources", "widgets"))


def test_no_import_circle_between_files_in_c2tui() -> None:
    """No two files of c2tui/ import each other round a loop, TYPE_CHECKING and in-function
    imports included (the experiment view and the summary view did, before issue 43)."""
    from tests.helpers.module_graph import circles, room_circles

    assert circles("c2tui") == []
    assert room_circles("c2tui") == {}


def test_c2tui_rooms_import_only_the_floors_below() -> None:
    """commands -> dashboard, text -> cli, sources, widgets: every import between two rooms of
    c2tui/ runs down C2TUI_FLOORS, none sideways on one floor or back up, and every room is on
    a floor (a new room is placed there on purpose)."""
    from tests.helpers.module_graph import graph

    floor = {room: i for i, rooms in enumerate(C2TUI_FLOORS) for room in rooms}

    def room(module: str) -> str:
        return module.split(".")[1] if "." in module else ""

    rooms = {room(m) for m in graph("c2tui")} - {""}
    assert rooms <= set(floor), f"c2tui rooms on no floor of C2TUI_FLOORS: {sorted(rooms - set(floor))}"
    up = sorted(f"{m} -> {d}" for m, deps in graph("c2tui").items() for d in deps
                if room(m) and room(d) and room(m) != room(d) and floor[room(d)] <= floor[room(m)])
    assert up == [], up


def test_the_c2tuis_root_holds_at_most_twelve_modules() -> None:
    """c2tui/ keeps its rooms by job (commands/, dashboard/, text/, sources/, cli/, widgets/);
    issue 43: 33 flat modules before."""
    root = sorted(p.name for p in (ROOT / "c2tui").glob("*.py"))
    assert len(root) <= 12, root
