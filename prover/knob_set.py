"""One syntax for a set of knob values, wherever a setting is named (issue 44): `record
--switch AT:SET`, an experiment's `--arm SET`, `attach --send SET`, the dashboard's `a` prompt
and the controller's `apply` all read a set through `parse_knob_set`, so a set written for one
is understood by every other.

    parse_knob_set("two-lock")                            {"lock_mode": "two-lock"}   (a bare value)
    parse_knob_set("mem_sync=stream")                     {"mem_sync": "stream"}
    parse_knob_set("lock_mode=two-lock,mem_sync=device")  both, applied as one change
    parse_knob_set("two-lock,stream")                     the same with bare values
    parse_knob_set("pause")                               {"paused": True}

Each item is prover/knobs.py's one item parse (`parse_switch`: names, aliases, the knob's own
check); a knob whose value is itself a comma list (`class_gpus=winning=1,window=2`) takes the
items after it that name no knob. A knob named twice with two values, an empty set and a set
longer than MAX_SET_CHARS are refused in one line naming what is wrong."""
from __future__ import annotations

from typing import Any, Mapping

from prover.knobs import KNOBS, parse_switch, switch_help

MAX_SET_CHARS = 200  # a set of every knob at its longest spelling fits; a longer one is not a setting
SET_FORM = "KNOB=VALUE[,KNOB=VALUE...]"
EXAMPLE = "lock_mode=two-lock,mem_sync=device"


def _names_a_knob(item: str) -> bool:
    """The item sets a knob of its own (KNOB=..., an alias, a bare value, pause / resume)."""
    name, sep, _ = item.partition("=")
    name = name.strip().replace("-", "_").lower()
    if sep:
        return any(name == k.name or name in k.aliases for k in KNOBS.values())
    try:
        parse_switch(item)
    except ValueError:
        return False
    return True


def _takes_commas(item: str) -> bool:
    """The item's knob takes a comma list as its value (class_gpus: CLASS=GPU,...)."""
    try:
        name, _ = parse_switch(item)
    except ValueError:
        return False
    return "," in KNOBS[name].accepts


def split_items(spec: str) -> list[str]:
    """The set's items, a comma list's continuation joined back to the knob it belongs to."""
    items: list[str] = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        if items and not _names_a_knob(item) and _takes_commas(items[-1]):
            items[-1] = f"{items[-1]},{item}"
        else:
            items.append(item)
    return items


def parse_knob_set(spec: str) -> dict[str, Any]:
    """The knobs a set names, typed and checked, in the order given. ValueError in one line
    naming the bad item and what the knob accepts."""
    if not isinstance(spec, str):
        raise ValueError(f"a knob set is text like {EXAMPLE}, got {type(spec).__name__}")
    if len(spec) > MAX_SET_CHARS:
        raise ValueError(f"knob set of {len(spec)} characters: at most {MAX_SET_CHARS} ({SET_FORM})")
    items = split_items(spec)
    if not items:
        raise ValueError(f"knob set {spec!r} names no knob; use {SET_FORM}, e.g. {EXAMPLE}")
    out: dict[str, Any] = {}
    for item in items:
        try:
            name, value = parse_switch(item)
        except ValueError as exc:
            if len(items) == 1:
                raise
            raise ValueError(f"in {spec!r}: {exc}") from None
        if name in out and out[name] != value:
            raise ValueError(f"knob set {spec!r} sets {name} twice ({show(name, out[name])} and {show(name, value)})")
        out[name] = value
    return out


def show(name: str, v: Any) -> str:
    """A knob's value as a person reads it and the set's syntax takes it back (on/off, 20GiB, two-lock)."""
    k = KNOBS[name]
    if k.kind is bool:
        return "on" if v else "off"
    return k.show(v) if k.parse_value is not None else str(v)


def knob_set_text(knobs: Mapping[str, Any]) -> str:
    """The set as its syntax writes it: "lock_mode=two-lock,mem_sync=device"."""
    return ",".join(f"{k}={show(k, v)}" for k, v in knobs.items())


def knob_set_help() -> str:
    """What a set accepts, for --help and errors: the form and every item."""
    return f"{SET_FORM}, each one of {switch_help()}"
