"""The fold as one package (issue 32): nothing under prover/fold/ imports a module that imports
it back (TYPE_CHECKING and in-function imports included), prover/'s root stays small, and a
concept is one declaration the registry picks up whole: its sub-state, its handlers, its view."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import module_graph

ROOT = Path(__file__).resolve().parents[2]
PROVER = ROOT / "prover"


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    stack, seen = [(start, [start])], {start}
    while stack:
        node, path = stack.pop()
        for nxt in graph.get(node, ()):
            if nxt == goal:
                return path + [nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def test_nothing_under_fold_imports_a_module_that_imports_it_back() -> None:
    graph = module_graph.graph("prover")
    back = []
    for name in sorted(m for m in graph if m.startswith("prover.fold")):
        for dep in sorted(graph[name]):
            path = _reaches(graph, dep, name)
            if path is not None:
                back.append(f"{name} -> " + " -> ".join(path))
    assert back == [], "\n".join(back)


def test_the_graph_sees_type_checking_imports() -> None:
    """The check above would miss the old circle if it skipped TYPE_CHECKING blocks."""
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from prover.fold.model import X\n")
    names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert "prover.fold.model" in names


def test_provers_root_holds_at_most_twelve_modules_and_no_state_files() -> None:
    root = sorted(p.name for p in PROVER.glob("*.py"))
    assert len(root) <= 12, root
    assert not [n for n in root if n.startswith("state")], root


def test_every_concept_with_a_sub_state_says_how_the_view_copies_it() -> None:
    from prover.fold import concepts
    from prover.fold.model import DashboardState

    s = DashboardState()
    for c in concepts():
        if c.make is not None:
            assert c.view is not None, c.name
            assert hasattr(s, c.name), c.name


@dataclass
class _Probe:
    seen: list[str] = field(default_factory=list)


def test_a_new_concept_is_one_declaration() -> None:
    """Registered, a concept's sub-state is made with every state, its handler folds the
    events it names (after the core's), and the view carries its own copy."""
    from prover import events as ev
    from prover.fold.apply import fold
    from prover.fold.concept import Concept, register, unregister

    def seen(own: _Probe, e: ev.Note, w) -> None:
        own.seen.append(f"{e.text} after {len(w.log)} notes")

    register(Concept("probe", _Probe, {ev.Note: seen}, view=lambda p, now: _Probe(list(p.seen))))
    try:
        s = fold([ev.Note(t=1.0, text="a"), ev.Note(t=2.0, text="b")])
        assert s.probe.seen == ["a after 1 notes", "b after 2 notes"]
        v = s.view()
        assert v.probe.seen == s.probe.seen and v.probe is not s.probe
        with pytest.raises(ValueError, match="two fold concepts"):
            register(Concept("probe", _Probe, {}, view=lambda p, now: p))
        with pytest.raises(ValueError, match="no way to copy"):
            register(Concept("probe2", _Probe, {}))
    finally:
        unregister("probe")
