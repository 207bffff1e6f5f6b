#!/usr/bin/env python3
# Vendored from the team's shared tools (pkg-graph) so CI runs it from a fresh clone (tests/unit/test_layers.py).
"""Import graph of prover/ by first-level part (prover.<part>), module-level and in-function imports alike,
from the source (ast), without importing anything. Prints cycles between parts and the imports that break
the rule 'kernels imports nothing from groth16 or pipeline'. Usage: pkg_graph.py REPO  (exit 1 on either)."""
import ast, sys
from pathlib import Path
from collections import defaultdict

root = Path(sys.argv[1]) / "prover"
edges = defaultdict(set); where = defaultdict(list)
def part_of(mod):
    bits = mod.split(".")
    return bits[1] if len(bits) > 1 and bits[0] == "prover" else None
for f in root.rglob("*.py"):
    rel = f.relative_to(root.parent).with_suffix("")
    me = ".".join(rel.parts)
    if me.endswith(".__init__"): me = me[: -len(".__init__")]
    src_part = part_of(me) if "." in me else None
    if src_part is None: continue
    tree = ast.parse(f.read_text())
    skip = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            skip |= {id(x) for b in n.body for x in ast.walk(b)}
    pkg = me if f.name == "__init__.py" else me.rsplit(".", 1)[0]
    for n in ast.walk(tree):
        if id(n) in skip: continue
        mods = []
        if isinstance(n, ast.Import): mods = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = pkg.split(".")
                base = base[: len(base) - (n.level - 1)]
                mods = [".".join(base + ([n.module] if n.module else []))]
            elif n.module: mods = [n.module]
        for m in mods:
            p = part_of(m)
            if p and p != src_part:
                edges[src_part].add(p); where[(src_part, p)].append(f"{rel}:{n.lineno}")
def cycles():
    out = []
    for a in edges:
        for b in edges[a]:
            if a < b and a in edges.get(b, set()): out.append((a, b))
    seen = []
    # longer cycles: DFS
    def dfs(start, node, path):
        for nxt in edges.get(node, ()):
            if nxt == start and len(path) > 2: seen.append(tuple(path))
            elif nxt not in path and nxt > start: dfs(start, nxt, path + [nxt])
    for s in list(edges): dfs(s, s, [s])
    return out, seen
two, longer = cycles()
bad = [(a, b) for a, b in where if a == "kernels" and b in ("groth16", "pipeline")]
for a, b in two: print(f"cycle {a} <-> {b}: {where[(a,b)][0]} / {where[(b,a)][0]}")
for c in longer[:5]: print("cycle " + " -> ".join(c))
for a, b in bad: print(f"kernels imports {b}: {where[(a,b)][0]}")
sys.exit(1 if two or longer or bad else 0)
