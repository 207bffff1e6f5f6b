"""`c2tui config --show [--json]` lists every run setting (a TOML key or run option) with its
type, default, allowed values and help, read from the pydantic models (prover/config.py) and
the run options' help (c2tui/cli/options.py), so the list cannot drift from what is accepted.
`c2tui config --check FILE` validates a TOML file; a bad key names the nearest valid one."""
from __future__ import annotations

import json
import sys
import re
import types
import typing
from pathlib import Path
from typing import Any

import click


def _option_help() -> dict[str, str]:
    """Each run option's help, keyed by RunConfig field (one source of help text)."""
    from c2tui.cli.options import run_options

    cmd = run_options(click.Command("x", callback=lambda **_: None))
    return {p.name: re.sub(r"\s*\[default:[^]]*\]", "", p.help or "").strip()
            for p in cmd.params if isinstance(p, click.Option) and p.name}


def _type_name(ann: Any) -> str:
    origin = typing.get_origin(ann)
    if origin is typing.Literal:
        return "str"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(ann) if a is not type(None)) + (
            " | none" if type(None) in typing.get_args(ann) else "")
    if origin is not None:
        args = ", ".join(_type_name(a) for a in typing.get_args(ann))
        return f"{origin.__name__}[{args}]"
    return getattr(ann, "__name__", str(ann))


_SIZE = "a size (24GiB, 16GB, 512MiB or bytes)"


def _allowed(name: str, f: Any) -> str:
    from prover import KNOBS

    ann = f.annotation
    k = KNOBS.get(name)
    if k is not None and k.parse_value is not None:  # a budget: what its one parse accepts
        return " | ".join(_SIZE if a == "SIZE" else a for a in k.accepts.split("|"))
    if k is not None:  # a live knob: its values from the one knob vocabulary
        return " | ".join(k.values) if k.values else (f"{k.lo}..{k.hi}" if k.kind is int else "on | off")
    if typing.get_origin(ann) is typing.Literal:
        return " | ".join(str(a) for a in typing.get_args(ann))
    if name == "profile":
        from prover import PROFILES

        return " | ".join(sorted(PROFILES))
    if name == "gpus":
        return "1..64, or a list of distinct device ids"
    lo = hi = None
    for m in f.metadata:
        for attr, sym in (("ge", ">="), ("gt", ">")):
            if getattr(m, attr, None) is not None:
                lo = f"{sym}{getattr(m, attr)}"
        for attr, sym in (("le", "<="), ("lt", "<")):
            if getattr(m, attr, None) is not None:
                hi = f"{sym}{getattr(m, attr)}"
    if lo and hi and lo.startswith(">=") and hi.startswith("<="):
        return f"{lo[2:]}..{hi[2:]}"
    return " and ".join(x for x in (lo, hi) if x) or ("on | off" if ann is bool else "")


def _default(name: str, f: Any) -> Any:
    from prover import KNOBS

    if f.default_factory is not None:
        return "{}"
    v = f.default
    k = KNOBS.get(name)
    if k is not None and k.parse_value is not None:
        return k.show(v)  # a budget as it reads (host_ram_budget 0: off), which its parse takes back
    if isinstance(v, bool):
        return "on" if v else "off"
    return "none" if v is None else v


def settings(model: Any = None, prefix: str = "") -> list[dict[str, Any]]:
    """One row per key: name, type, default, allowed, help; a table ([faults], [kernels])
    gives its own keys as table.key."""
    from pydantic import BaseModel

    from prover import RunConfig

    model = model or RunConfig
    helps = _option_help() if not prefix else {}
    rows = []
    for name, f in model.model_fields.items():
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
            rows += settings(f.annotation, f"{prefix}{name}.")
            continue
        rows.append({"key": prefix + name, "type": _type_name(f.annotation), "default": _default(name, f),
                     "allowed": _allowed(name if not prefix else "", f),  # knobs/profile: top level only
                     "help": f.description or helps.get(name, "")})
    return rows


@click.command("config")
@click.option("--show", is_flag=True, help="list every setting: type, default, allowed values, help")
@click.option("--json", "as_json", is_flag=True, help="with --show: as JSON")
@click.option("--check", "check", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="validate a TOML config file")
def command(show: bool, as_json: bool, check: Path | None) -> None:
    """Run settings: what each key means, and whether a file is valid."""
    if check is not None:
        from prover import ConfigError, load_config

        try:
            load_config(check)
        except ConfigError as exc:
            raise click.UsageError(f"{check}: {exc}") from None
        click.echo(f"{check}: ok")
        return
    if not show:
        click.echo(click.get_current_context().get_help())
        return
    rows = settings()
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title="c2tui run settings (TOML keys; run options spell _ as -)", title_justify="left")
    for col in ("key", "type", "default", "allowed", "help"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(r["key"], r["type"], str(r["default"]), r["allowed"], r["help"])
    Console(width=None if sys.stdout.isatty() else 160).print(t)
