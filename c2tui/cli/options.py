"""The run options shared by `c2tui run` and `c2tui record` (one place, one spelling).

    @click.command()
    @run_options
    def command(**kwargs):
        cfg = config_from_options(**kwargs)       # raises prover.config.ConfigError

Every option defaults to None ("not given"), so a value from `--config FILE.toml` is only
overridden by what is spelled on the command line; unspecified fields take RunConfig's
defaults. Choices are validated by click (exit 2 naming the allowed values); everything else
by RunConfig (ConfigError, which commands turn into a usage error, exit 2).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, TypeVar

import click

from prover import KNOBS, Knob

F = TypeVar("F", bound=Callable[..., Any])

CLI_KNOBS = ("workers_per_gpu", "lock_mode", "mem_sync", "prestage", "b_g2", "host_ram_budget", "host_threads",
             "vram_budget",
             "class_gpus", "abc")  # paused: a key, not a flag


def _profiles_help() -> str:
    try:
        from prover import PROFILES

        return ", ".join(sorted(PROFILES))
    except Exception:  # pragma: no cover
        return "rtx5070ti-16g"


class KnobChoice(click.Choice):
    """A click choice over a knob's values, read from prover.knobs when used (not frozen at import)."""

    def __init__(self, knob: str) -> None:
        self.knob = knob
        super().__init__(KNOBS[knob].values or ())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return KNOBS[self.knob].values or ()

    @choices.setter
    def choices(self, _: Any) -> None:
        pass


def _shown(k: Knob) -> str:
    if k.parse_value is not None:  # a knob of its own shape says how its values read (host_ram_budget 0: off)
        return k.show(k.default)
    if k.kind is bool:
        return "on" if k.default else "off"
    return str(k.default)


def knob_option(name: str) -> Callable[[F], F]:
    """The CLI option for one knob: its flag, type, values and help from prover.knobs."""
    k = KNOBS[name]
    help_ = f"{k.help}  [default: {_shown(k)}]"
    if k.kind is bool:
        return click.option(f"{k.flag}/--no-{k.flag[2:]}", name, default=None, help=help_)
    # a knob of its own shape takes the text as given: RunConfig runs the knob's one parse on it
    kind: Any = str if k.parse_value is not None else int if k.kind is int else KnobChoice(name)
    return click.option(k.flag, name, type=kind, default=None, help=help_)


def run_options(func: F) -> F:
    """Decorate a click command with the shared run options (all default None)."""
    opts = [
        click.option("--config", "config", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                     help="TOML file with run settings (flat keys, optional [faults] table)"),
        click.option("--backend", type=click.Choice(["auto", "sim", "cuda"]), default=None,
                     help="auto: cuda if a GPU is visible, else sim  [default: auto]"),
        click.option("--gpus", default=None, help="number of GPUs, or a comma list of device ids  [default: 1]"),
        *(knob_option(name) for name in CLI_KNOBS),
        click.option("--constraints-log2", type=int, default=None, help="size of the circuit really proved (8..27)  [default: 10]"),
        click.option("--modelled-log2", type=int, default=None, help="size whose timings/VRAM are modelled  [default: the profile's, 27; native: the proved size]"),
        click.option("--partitions", type=int, default=None, help="partitions per sector  [default: 10]"),
        click.option("--profile", default=None, help=f"device profile: {_profiles_help()}  [default: rtx5070ti-16g]"),
        click.option("--seed", type=int, default=None, help="circuit, setup, randomisers and fault seed  [default: 0]"),
        click.option("--time-scale", type=float, default=None,
                     help="phase duration = modelled time x this (0.1 = ten times faster)  [default: 1]"),
        click.option("--verify-share", type=float, default=None, help="share of proofs self-checked  [default: 1]"),
        click.option("--cache-dir", default=None, help="proving-key cache directory"),
        click.option("--msm-max-c", "msm_max_c", type=click.IntRange(6, 22), default=None,
                     help="widest MSM window (bits) the kernels' cost model may pick (kernels.msm_max_c)  [default: 16]"),
        click.option("--insecure-seeded-setup", is_flag=True, default=None,
                     help="derive the setup's toxic waste from --seed: reproducible keys, INSECURE (the seed forges proofs)"),
        click.option("--insecure-seeded-proofs", is_flag=True, default=None,
                     help="derive each proof's r, s from --seed: reproducible proofs, INSECURE (no zero knowledge)"),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


def run_option_names() -> frozenset[str]:
    """The parameter names run_options adds (serve forwards exactly these to `c2tui run`)."""
    def probe() -> None: ...
    return frozenset(p.name for p in run_options(probe).__click_params__ if p.name)  # type: ignore[attr-defined]


def finite(value: float, name: str, lo: float, hi: float, low_open: bool = False) -> float:
    """`value` if finite and within [lo, hi] ((lo, hi] with low_open); a usage error otherwise."""
    below = value <= lo if low_open else value < lo
    if not math.isfinite(value) or below or value > hi:
        low = f"> {lo:g}" if low_open else f">= {lo:g}"
        raise click.BadParameter(f"{value} is not a finite number {low} and <= {hi:g}", param_hint=name)
    return value


class FiniteRange(click.FloatRange):
    """click.FloatRange that refuses nan and +-inf: FloatRange passes nan (every comparison
    with it is false), so `summary --window nan` printed "nan/min over the last nan s"."""

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{rv} is not a finite number", param, ctx)
        return rv


FPS_RANGE = (0.5, 60.0)


def check_screen(theme: str, fps: float) -> None:
    """The screen options run and serve share: a known theme, a finite refresh rate in range."""
    import themes

    if theme not in themes.names():
        raise click.BadParameter(f"unknown theme {theme!r}; have {', '.join(themes.names())}", param_hint="--theme")
    finite(fps, "--fps", *FPS_RANGE)


def _gpus(v: Any) -> Any:
    if v is None or isinstance(v, (int, list)):
        return v
    s = str(v).strip()
    if "," in s:
        try:
            return [int(x) for x in s.split(",") if x.strip()]
        except ValueError:
            return s  # RunConfig names the field and what it accepts
    try:
        return int(s)
    except ValueError:
        return s


def config_from_options(**kwargs: Any) -> Any:
    """Build a RunConfig from the options' values (plus any extra RunConfig fields passed,
    e.g. sectors=, faults=). Unknown keys that are not RunConfig fields are ignored, so a
    command can pass its whole **kwargs. Raises prover.config.ConfigError."""
    from prover import RunConfig, load_config

    path = kwargs.pop("config", None)
    over: dict[str, Any] = {}
    for k, v in kwargs.items():
        if k in RunConfig.model_fields:
            over[k] = _gpus(v) if k == "gpus" else v
    if kwargs.get("msm_max_c") is not None:  # a kernel setting with a run option of its own
        over["kernels"] = {**over.get("kernels", {}), "msm_max_c": kwargs["msm_max_c"]}
    cfg = load_config(path, **over)
    if cfg.cache_dir is not None:  # every command that runs a prover: `run --cache-dir /dev/null` was taken
        from pathlib import Path

        from c2tui.cli.exits import writable_dir

        writable_dir(Path(cfg.cache_dir), "--cache-dir")
    return cfg
