"""The import graph of prover/ between files, from the source (ast, nothing imported): every
import statement, module-level, in a function or under TYPE_CHECKING alike. `circles` finds
the files that import each other round a loop; `room_circles` the rooms (the direct children
of one package: its modules and, collapsed, its sub-packages) that do, so an arrow that runs
back up from a room to the package around it shows (tests/unit/test_layers.py)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules(pkg: str = "prover") -> dict[str, Path]:
    out = {}
    for f in (ROOT / pkg).rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def graph(pkg: str = "prover") -> dict[str, set[str]]:
    """module -> the modules of `pkg` it imports (`from package import sub` names the sub-module)."""
    mods = modules(pkg)
    out: dict[str, set[str]] = {}
    for name, f in mods.items():
        here = name if f.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for n in ast.walk(ast.parse(f.read_text())):
            if isinstance(n, ast.Import):
                deps |= {a.name for a in n.names}
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    up = here.split(".")[: len(here.split(".")) - (n.level - 1)]
                    base = ".".join(up + ([n.module] if n.module else []))
                deps |= {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in n.names}
        out[name] = {d for d in deps if d in mods and d != name}
    return out


def _strongly_connected(g: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def circles(pkg: str = "prover") -> list[list[str]]:
    """The files of `pkg` that import each other round a loop (each loop's files)."""
    return _strongly_connected(graph(pkg))


def room_circles(pkg: str = "prover") -> dict[str, list[list[str]]]:
    """For every package under `pkg`: its rooms (direct children) that import each other round a
    loop. A module inside a room that imports the package's own module which imports the room
    back is such a loop: an arrow running back up."""
    g, mods = graph(pkg), modules(pkg)
    packages = {m for m, f in mods.items() if f.name == "__init__.py"}
    out: dict[str, list[list[str]]] = {}
    for p in sorted(packages):
        depth = p.count(".") + 1

        def room(m: str) -> str | None:
            return ".".join(m.split(".")[: depth + 1]) if m.startswith(p + ".") else None

        edges: dict[str, set[str]] = {}
        for m, deps in g.items():
            a = room(m)
            if a is None:
                continue
            for d in deps:
                b = room(d)
                if b is not None and b != a:
                    edges.setdefault(a, set()).add(b)
        loops = _strongly_connected(edges)
        if loops:
            out[p] = loops
    return out
