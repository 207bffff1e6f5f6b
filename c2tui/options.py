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

F = TypeVar("F", bound=Callable[..., Any])

# option name -> RunConfig field
_FIELDS = {
    "backend": "backend", "gpus": "gpus", "workers_per_gpu": "workers_per_gpu", "lock_mode": "lock_mode",
    "mem_sync": "mem_sync", "vram_budget": "vram_budget", "constraints_log2": "constraints_log2",
    "modelled_log2": "modelled_log2", "partitions": "partitions", "profile": "profile", "seed": "seed",
    "time_scale": "time_scale", "prestage": "prestage", "b_g2": "b_g2", "verify_share": "verify_share",
    "cache_dir": "cache_dir", "insecure_seeded_setup": "insecure_seeded_setup",
}
RUN_OPTION_NAMES = frozenset(_FIELDS) | {"config"}


def _profiles_help() -> str:
    try:
        from prover.device.profiles import PROFILES

        return ", ".join(sorted(PROFILES))
    except Exception:  # pragma: no cover
        return "rtx5070ti-16g"


def run_options(func: F) -> F:
    """Decorate a click command with the shared run options (all default None)."""
    opts = [
        click.option("--config", "config", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                     help="TOML file with run settings (flat keys, optional [faults] table)"),
        click.option("--backend", type=click.Choice(["auto", "sim", "cuda"]), default=None,
                     help="auto: cuda if a GPU is visible, else sim  [default: auto]"),
        click.option("--gpus", default=None, help="number of GPUs, or a comma list of device ids  [default: 1]"),
        click.option("--workers-per-gpu", type=int, default=None, help="workers sharing each GPU  [default: 3]"),
        click.option("--lock-mode", type=click.Choice(["single", "two-lock"]), default=None,
                     help="single: mem+compute held for the whole GPU section; two-lock: pre-stage under mem  [default: two-lock]"),
        click.option("--mem-sync", type=click.Choice(["device", "stream"]), default=None,
                     help="device: device sync + pool trim inside mem (the seed); stream: stream-ordered only  [default: device]"),
        click.option("--prestage/--no-prestage", default=None, help="pre-stage a/b/c under mem  [default: on]"),
        click.option("--b-g2", "b_g2", type=click.Choice(["cpu", "gpu"]), default=None, help="where b_g2_msm runs  [default: cpu]"),
        click.option("--vram-budget", default=None, help="VRAM budget per GPU, e.g. 24GiB  [default: 24GiB]"),
        click.option("--constraints-log2", type=int, default=None, help="size of the circuit really proved (8..24)  [default: 10]"),
        click.option("--modelled-log2", type=int, default=None, help="size whose timings/VRAM are modelled  [default: profile's, 27]"),
        click.option("--partitions", type=int, default=None, help="partitions per sector  [default: 10]"),
        click.option("--profile", default=None, help=f"device profile: {_profiles_help()}  [default: rtx5070ti-16g]"),
        click.option("--seed", type=int, default=None, help="circuit, setup, randomisers and fault seed  [default: 0]"),
        click.option("--time-scale", type=float, default=None,
                     help="phase duration = modelled time x this (0.1 = ten times faster)  [default: 1]"),
        click.option("--verify-share", type=float, default=None, help="share of proofs self-checked  [default: 1]"),
        click.option("--cache-dir", default=None, help="proving-key cache directory"),
        click.option("--insecure-seeded-setup", is_flag=True, default=None,
                     help="derive the setup's toxic waste from --seed: reproducible keys, INSECURE (the seed forges proofs)"),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


def finite(value: float, name: str, lo: float, hi: float, low_open: bool = False) -> float:
    """`value` if finite and within [lo, hi] ((lo, hi] with low_open); a usage error otherwise."""
    below = value <= lo if low_open else value < lo
    if not math.isfinite(value) or below or value > hi:
        low = f"> {lo:g}" if low_open else f">= {lo:g}"
        raise click.BadParameter(f"{value} is not a finite number {low} and <= {hi:g}", param_hint=name)
    return value


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
    from prover.config import RunConfig, load_config

    path = kwargs.pop("config", None)
    over: dict[str, Any] = {}
    for k, v in kwargs.items():
        field = _FIELDS.get(k, k)
        if field in RunConfig.model_fields:
            over[field] = _gpus(v) if field == "gpus" else v
    return load_config(path, **over)
