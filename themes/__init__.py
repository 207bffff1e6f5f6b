"""Themes of the c2tui dashboard, shipped inside the wheel (package data *.toml / *.tcss).

Each `NAME.toml` holds the fields of a Textual `Theme` plus a `[palette]` table: the colours
of phases, lock waits, VRAM parts and workers that the dashboard paints with Rich styles.
`c2tui.tcss` is the app's stylesheet (layout only; colours come from theme variables).
Files are read with importlib.resources, so they load from an installed wheel too.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

ORDER = ("dark", "light", "high-contrast")
PREFIX = "c2tui-"
_THEME_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
                 "background", "surface", "panel", "boost", "dark", "luminosity_spread", "text_alpha")


@dataclass(frozen=True)
class Palette:
    colours: dict[str, str]
    workers: tuple[str, ...]
    workers_alt: tuple[str, ...]

    def __getitem__(self, key: str) -> str:
        return self.colours.get(key, self.colours.get("dim", "#888888"))

    def worker(self, i: int, alt: bool = False) -> str:
        seq = self.workers_alt if alt else self.workers
        return seq[i % len(seq)]


@dataclass(frozen=True)
class ThemeSpec:
    name: str
    fields: dict = field(default_factory=dict)
    palette: Palette | None = None


def _read(name: str) -> dict:
    data = resources.files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(data)


def names() -> list[str]:
    found = sorted(p.name[:-5] for p in resources.files(__name__).iterdir() if p.name.endswith(".toml"))
    return [n for n in ORDER if n in found] + [n for n in found if n not in ORDER]


def load(name: str) -> ThemeSpec:
    raw = _read(name)
    pal = dict(raw.get("palette", {}))
    workers = tuple(pal.pop("workers", ["#61afef"]))
    workers_alt = tuple(pal.pop("workers_alt", workers))
    fields = {k: raw[k] for k in _THEME_FIELDS if k in raw}
    return ThemeSpec(name=name, fields=fields, palette=Palette(pal, workers, workers_alt))


def textual_theme(spec: ThemeSpec):
    from textual.theme import Theme

    return Theme(name=PREFIX + spec.name, **spec.fields)


def stylesheet() -> str:
    return resources.files(__name__).joinpath("c2tui.tcss").read_text(encoding="utf-8")
