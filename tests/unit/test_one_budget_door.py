"""The VRAM budget has one door (issue 43): the GPU's room writes it, in one method, and a
budget spec is resolved in one place. An AST scan over prover/: a second writer or a second
resolver fails here, naming where it is."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROVER = ROOT / "prover"

# the one writer of the budget in force, and the one door every change goes through
WRITER = ("prover/pipeline/gpu/room.py", "Room._apply")
DOOR = ("prover/pipeline/gpu/room.py", "Room.set_budget")
# attributes named `budget` that are not the budget in force: an attach client's queue budget,
# and the readers' copies of what the events say (the fold's, the fleet driver's scheduler)
NOT_VRAM = {("prover/attach/peer.py", "Peer.__init__"), ("prover/attach/server.py", "AttachServer.__init__"),
            ("prover/fold/apply.py", "_gpu_info"), ("prover/fold/apply.py", "_vram_sample"),
            ("prover/fleet/scheduler.py", "Scheduler.vram")}


def _functions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(qualified name, node) of every function, `Class.method` for methods."""
    out: list[tuple[str, ast.AST]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child))
                walk(child, f"{prefix}{child.name}.")

    walk(tree, "")
    return out


def _writes_budget(fn: ast.AST) -> bool:
    """An assignment to an attribute named `budget` (or setattr(..., "budget", ...)) in fn's own body."""
    for node in ast.walk(fn):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "budget":
                return True
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and sub.attr == "budget":
                    return True
    return False


def _scan() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    writers, doors, resolves = [], [], []
    for path in sorted(PROVER.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        fns = _functions(tree)
        inner = {id(n) for _, fn in fns for n in ast.walk(fn) if n is not fn and isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for name, fn in fns:
            if id(fn) in inner:
                continue  # a nested function is looked at with its outer one
            if _writes_budget(fn) and (rel, name) not in NOT_VRAM:
                writers.append((rel, name))
            if name.rsplit(".", 1)[-1] == "set_budget":
                doors.append((rel, name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if called in ("_resolve", "resolve") and rel.startswith("prover/device/"):
                    resolves.append((rel, called))
    return writers, doors, resolves


def test_the_vram_budget_has_one_writer_and_one_door() -> None:
    writers, doors, _ = _scan()
    assert writers == [WRITER], f"the VRAM budget is written outside {WRITER[1]}: {writers}"
    assert doors == [DOOR], f"a second door to the VRAM budget: {doors}"


def test_a_budget_spec_is_resolved_in_one_place() -> None:
    """`card`, `two-prestage` and sizes read in bytes in device/budget.py's Sizing.bytes only
    (config validation, the room's door and a fleet host's figure all call it)."""
    _, _, resolves = _scan()
    assert resolves == [("prover/device/budget.py", "_resolve")], resolves
    tree = ast.parse((PROVER / "device" / "budget.py").read_text())
    callers = [name for name, fn in _functions(tree)
               if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_resolve"
                      for n in ast.walk(fn))]
    assert callers == ["Sizing.bytes"], callers


def test_the_scan_sees_a_second_writer() -> None:
    """The scan would see what it is for: a device that sets its own budget again."""
    tree = ast.parse("class D:\n    def set_budget(self, n):\n        self.budget = n\n")
    (name, fn), = _functions(tree)
    assert name == "D.set_budget" and _writes_budget(fn)
    tree = ast.parse("def f(d, n):\n    setattr(d, 'budget', n)\n")
    assert _writes_budget(_functions(tree)[0][1])
