"""The knobs, each defined once: name, type, allowed values, default, keys, help text. All are
live (changed mid-run through the Controller) but those marked `live=False` (abc: it decides what
a worker's host buffers and each GPU's resident memory are), which are set when a run starts.

RunConfig (types, defaults, validation), the CLI's run options, the Controller (setters,
`--switch` parsing), the dashboard's key bindings and help screen, the fold and the summary
all read this table; adding a value to a knob here is the whole change.

`values` is the allowed set for a choice knob (None: bool or int, see `lo`/`hi`, or a knob of
its own shape, see `parse_value`: the budgets, whose one parse every door shares). `keys` are
(key, action, footer label, key_display) for the dashboard: a key turns the knob in the UI,
which sends the change to the Controller (textual key names; prover imports no UI).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from prover.device import budget
from prover import disciplines, host_budget, placement
from prover.disciplines import b_g2, mem_sync
from prover.host import threads as host_threads

BOOL_WORDS = {"on": True, "true": True, "1": True, "yes": True, "off": False, "false": False, "0": False, "no": False}


@dataclass(frozen=True)
class Key:
    key: str  # textual key name(s), comma separated
    action: str  # the dashboard action it runs
    label: str  # footer label
    display: str | None = None  # how the footer shows the key


@dataclass(frozen=True)
class Knob:
    name: str
    kind: type  # str (a choice of `values`), int (lo..hi) or bool
    default: Any  # "auto" (not one of `values`): the engine picks a value at start
    help: str  # for --help and docs
    key_help: str  # for the help screen; {values} is the values joined with ↔
    key_label: str  # the help screen's key column
    keys: tuple[Key, ...]
    values: tuple[str, ...] | None = None
    lo: int = 0
    hi: int = 0
    live: bool = True  # can change mid-run (through the Controller); False: set at start only, refused live
    aliases: tuple[str, ...] = ()  # other spellings in `--switch KNOB=VALUE`
    bare: bool = False  # a bare value is a switch too (`--switch two-lock`)
    # what runs a value (lock_mode, mem_sync, b_g2: their registries in prover/disciplines/): a
    # value listed here but not there is refused, so a value added to this table alone cannot run
    runs: Callable[[], tuple[str, ...]] | None = None
    # a knob of its own shape (vram_budget: a size or a scenario; host_ram_budget: a size or
    # off): its one parse (the value itself or its text, so every door checks it alike;
    # ValueError naming it), how a person reads a value (the summary, --help's default, a hook
    # knob's ModeChange), what `--switch` accepts
    parse_value: Callable[[Any], Any] | None = None
    show: Callable[[Any], str] = str
    accepts: str = ""
    hook: str | None = None  # the EngineHooks method that applies it (returns (old, new))
    guard: str | None = None  # the EngineHooks method that may refuse a live value (ValueError, with the numbers)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, v: Any) -> Any:
        """The value if allowed, else ValueError naming the knob and what it accepts."""
        if self.parse_value is not None:
            return self.parse_value(v)
        if self.kind is bool:
            if not isinstance(v, bool):
                raise ValueError(f"{self.name} must be on or off, got {v!r}")
            return v
        if self.kind is int:
            if isinstance(v, bool) or not isinstance(v, int) or not self.lo <= v <= self.hi:
                raise ValueError(f"{self.name} must be an integer {self.lo}..{self.hi}, got {v!r}")
            return v
        if v not in (self.values or ()):
            raise ValueError(f"{self.name} must be one of {', '.join(self.values or ())}, got {v!r}")
        self.check_runs(v)
        return v

    def check_runs(self, v: Any) -> None:
        """ValueError if nothing runs value v (see `runs`)."""
        if self.runs is not None and v not in self.runs():
            raise ValueError(f"{self.name} {v!r} has nothing that runs it; runnable: {', '.join(self.runs())}")

    def parse(self, text: str) -> Any:
        """A value from its textual form (`--switch`), checked."""
        t = text.strip()
        if self.parse_value is not None:
            return self.parse_value(t)
        if self.kind is bool:
            if t.lower() not in BOOL_WORDS:
                raise ValueError(f"{self.name} must be on or off, got {text!r}")
            return BOOL_WORDS[t.lower()]
        if self.kind is int:
            try:
                n = int(t)
            except ValueError:
                raise ValueError(f"{self.name} must be an integer {self.lo}..{self.hi}, got {text!r}") from None
            if not self.lo <= n <= self.hi:
                raise ValueError(f"{self.name} must be an integer {self.lo}..{self.hi}, got {text!r}")
            return n
        return self.check(t.lower())

    def next_value(self, current: str) -> str:
        """The value a key press turns a choice knob to (cycling through `values`)."""
        vals = self.values or ()
        return vals[(vals.index(current) + 1) % len(vals)] if current in vals else vals[0]

    def key_row(self) -> tuple[str, str]:
        return self.key_label, self.key_help.format(values=" ↔ ".join(self.values or ()))

    def switch_help(self) -> str:
        if self.accepts:
            return f"{self.name}={self.accepts}"
        if self.kind is bool:
            return f"{self.name}=on|off"
        if self.kind is int:
            return f"{self.name}=N"
        return f"{self.name}={'|'.join(self.values or ())}"


KNOBS: dict[str, Knob] = {k.name: k for k in (
    Knob("lock_mode", str, "two-lock", values=disciplines.names(), bare=True, aliases=("mode",),
         runs=disciplines.names,
         help="; ".join(f"{n}: {h}" for n, h in disciplines.summaries().items()),
         key_label="l", key_help="lock mode: {values}", keys=(Key("l", "lock_mode", "lock mode"),)),
    Knob("mem_sync", str, "device", values=mem_sync.names(), bare=True, runs=mem_sync.names,
         help="; ".join(f"{n}: {h}" for n, h in mem_sync.summaries().items()),
         key_label="m", key_help="mem_sync: {values} (device = cudaDeviceSynchronize + trim in mem)",
         keys=(Key("m", "mem_sync", "mem_sync"),)),
    Knob("workers_per_gpu", int, 3, lo=1, hi=16, aliases=("workers",), help="workers sharing each GPU",
         key_label="+ / -", key_help="workers per GPU up / down",
         keys=(Key("plus,equals_sign", "workers_up", "workers+", "+"), Key("minus", "workers_down", "workers-", "-"))),
    Knob("prestage", bool, True, help="pre-stage a/b/c under mem", key_label="p", key_help="pre-stage on / off",
         keys=(Key("p", "prestage", "prestage"),)),
    Knob("b_g2", str, "auto", values=b_g2.names(), runs=b_g2.names,
         help="where b_g2_msm runs (auto: gpu where the CUDA kernels load, else cpu; resolved at start)",
         key_label="b",
         key_help="b_g2 MSM on {values}", keys=(Key("b", "b_g2", "b_g2 cpu/gpu"),)),
    Knob("host_ram_budget", int, 0, parse_value=host_budget.parse_spec, show=host_budget.show,
         accepts=host_budget.ACCEPTS, guard="check_host_ram_budget", aliases=("host_budget",),
         help="host RAM for proving keys and the workers' buffers (e.g. 256GiB; off: no limit): a worker "
              "whose partition would exceed it waits, never an OOM", key_label="", key_help="", keys=()),
    Knob("host_threads", int, host_threads.AUTO, parse_value=host_threads.parse_spec, show=host_threads.show,
         accepts=host_threads.ACCEPTS, aliases=("threads",),
         help="threads one partition's host phases (synthesis, prep_msm) may use: N, or auto (this host's cores / "
              "the workers, read at each partition); model a smaller host with it (live: the next partition's "
              "synthesis takes it)", key_label="", key_help="", keys=()),
    Knob("vram_budget", str, "card", parse_value=budget.parse_spec, show=budget.show, hook="set_vram_budget",
         accepts="SIZE|" + "|".join(budget.SCENARIOS), aliases=("budget",),
         help="VRAM budget per GPU: bytes ('16GiB', '24GB', ...) or a scenario: card (the profile's card; native: "
              "the device's memory), two-prestage (two partitions' pre-stages, not three)",
         key_label="", key_help="", keys=()),
    Knob("class_gpus", str, "", parse_value=placement.parse_spec, show=placement.show, accepts=placement.ACCEPTS,
         guard="check_class_gpus", aliases=("placement",),
         help="pin a proof class to GPUs: winning=1 (GPU 1 runs winning only), winning=1:1 (one of GPU 1's workers "
              "kept for winning), off: every class anywhere (prover/placement.py)", key_label="", key_help="", keys=()),
    Knob("abc", str, "auto", values=("host", "gpu"), live=False,
         help="where a partition's a = A.z, b = B.z, c = C.z are made: host (synthesis builds them, the pre-stage "
              "uploads 96 B a row), gpu (the circuit's matrices resident on each GPU, the pre-stage uploads z and its "
              "classes, 33 B a variable, and the R1CS kernel makes them there), auto: gpu where the backend runs the "
              "R1CS kernel, else host (resolved at start; set at start only)", key_label="", key_help="", keys=()),
    Knob("paused", bool, False, help="start paused", key_label="space", key_help="pause / resume the prover",
         keys=(Key("space", "pause", "pause/resume", "␣"),)),
)}


def knob(name: str) -> Knob:
    return KNOBS[name]


def default(name: str) -> Any:
    return KNOBS[name].default


def switch_help() -> str:
    bare = [v for k in KNOBS.values() if k.bare for v in (k.values or ())]
    return " | ".join([*bare, "pause", "resume", *(k.switch_help() for k in KNOBS.values() if k.live)])


def parse_switch(spec: str) -> tuple[str, Any]:
    """'two-lock' -> ('lock_mode','two-lock'); 'mem_sync=stream' -> ('mem_sync','stream'); ...

    Raises ValueError naming the allowed values."""
    s = spec.strip()
    low = s.lower()
    for k in KNOBS.values():
        if k.bare and low in (k.values or ()):
            return k.name, k.check(low)
    if low in ("pause", "resume"):
        return "paused", low == "pause"
    if "=" not in s:
        raise ValueError(f"unknown switch {spec!r}; use {switch_help()}")
    name, v = (x.strip() for x in s.split("=", 1))
    name = name.replace("-", "_").lower()
    for k in KNOBS.values():
        if name == k.name or name in k.aliases:
            if not k.live:  # a switch, an arm, attach --send, the `a` prompt: all change a run that goes on
                raise ValueError(f"{k.name} is set when a run starts ({k.flag}), not switched while it runs")
            return k.name, k.parse(v)
    raise ValueError(f"unknown knob {name!r}; use {switch_help()}")
