"""Themes ship inside the package (importlib.resources, package data) and are complete."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import themes
from c2tui.widgets.common import PHASES

ROOT = Path(__file__).resolve().parents[2]


def test_three_themes_at_least():
    assert {"dark", "light", "high-contrast"} <= set(themes.names())
    assert themes.names()[:3] == ["dark", "light", "high-contrast"]


@pytest.mark.parametrize("name", themes.names())
def test_theme_is_complete(name):
    spec = themes.load(name)
    pal = spec.palette
    for key in (*PHASES, "wait:mem", "wait:compute", "idle", "pool", "free", "budget", "dim", "ok", "fail",
                "warn", "info", "sim"):
        assert key in pal.colours, f"{name}: palette lacks {key}"
        assert pal.colours[key].startswith("#"), "truecolor only (the dashboard skips the ANSI filter)"
    assert len(pal.workers) >= 8 and len(pal.workers_alt) == len(pal.workers)
    t = themes.textual_theme(spec)
    assert t.name == themes.PREFIX + name and t.dark == (name != "light")


def test_shipped_as_package_data():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = cfg["tool"]["setuptools"]["package-data"]["themes"]
    assert "*.toml" in data and "*.tcss" in data
    assert "c2tui.tcss" in [p.name for p in Path(themes.__file__).parent.iterdir()]
    assert "#gpus" in themes.stylesheet()
