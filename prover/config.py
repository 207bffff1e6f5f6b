"""Everything a run takes, as validated pydantic models, loadable from TOML.

`load_config(path, **overrides)` reads an optional TOML file (flat keys plus an optional
`[faults]` table), applies keyword overrides (None means "not given"), and validates. Any bad
value raises `ConfigError` whose message names the field and the allowed values; the CLI
turns that into exit status 2.

Defaults tell the seed's story: profile rtx5070ti-16g modelling a 2^27 partition (d_a 4 GiB +
d_bc 8 GiB), 3 workers per GPU, the card's 16 GiB as the VRAM budget (not even two
pre-stages fit; `vram_budget = "two-prestage"` is the 24 GiB that holds two, not three), lock
mode two-lock with mem_sync=device (the seed's Phase 10 as first written).
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from prover.device.budget import parse_bytes  # noqa: F401 (re-exported: one parse of a size)
from prover.events import Phase
from prover import bounds
from prover.inputs import InputError, read_input
from prover.classes import CLASSES, DEFAULT_OFFSETS, ClassSize, class_sizes
from prover.knobs import KNOBS
from prover.settings import KernelSettings

Backend = Literal["auto", "sim", "cuda"]
_CHOICE_KNOBS = tuple(k.name for k in KNOBS.values() if k.values)
_SHAPED_KNOBS = tuple(k.name for k in KNOBS.values() if k.parse_value is not None)  # the budgets


MAX_CONFIG_BYTES = bounds.MAX_CONFIG_BYTES


class ConfigError(ValueError):
    """An invalid configuration; the message names the field(s) and allowed values."""


class FaultsConfig(BaseModel):
    """Fault injection for tests and demos (issue 7). All off by default.

    Rates are probabilities per opportunity, drawn from a RNG seeded by the run seed, so a
    faulty run is reproducible. `phase_error` maps a phase name to a probability that the
    phase raises; `oom_rate` makes an allocation fail; `hang` makes a phase sleep
    `hang_seconds` (the watchdog reports it); `worker_death_rate` kills a worker thread
    between partitions; `corrupt_proof_rate` flips the proof so verification must fail;
    `nvml_missing` makes CudaDevice behave as if NVML could not be loaded; `vram_leak_bytes`
    plants a VRAM leak (sim: bytes kept per partition).
    """

    # strict (issue 35): a TOML `oom_rate = "0.5"` or `nvml_missing = "yes"` is refused, not coerced
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)
    phase_error: dict[Phase, float] = Field(default_factory=dict, description="phase name -> probability that the phase raises")
    oom_rate: float = Field(0.0, ge=0.0, le=1.0, description="probability that an allocation fails (OOM)")
    hang: dict[Phase, float] = Field(default_factory=dict, description="phase name -> probability that it sleeps hang_seconds")
    hang_seconds: float = Field(5.0, ge=0.0, description="how long a hung phase sleeps (the watchdog reports it)")
    worker_death_rate: float = Field(0.0, ge=0.0, le=1.0, description="probability a worker thread dies between partitions")
    corrupt_proof_rate: float = Field(0.0, ge=0.0, le=1.0, description="probability a proof is flipped (verification must fail)")
    cuda_error_rate: float = Field(0.0, ge=0.0, le=1.0, description="probability a GPU phase raises a modelled CUDA "
                                   "error: the partition fails (retried up to `retries`); no CPU fallback is tried")
    nvml_missing: bool = Field(False, description="behave as if NVML could not be loaded")
    vram_leak_bytes: int = Field(0, ge=0, description="sim: keep this many bytes per partition, never freed "
                                 "(a planted VRAM leak for the growth warning; prover/device/leaky.py)")
    retries: int = Field(0, ge=0, le=10, description="times a failed partition is retried")
    watchdog_lock_s: float = Field(30.0, gt=0.0, description="stall event when a lock is held longer")
    watchdog_phase_s: float = Field(60.0, gt=0.0, description="stall event when a phase runs longer")

    @field_validator("phase_error", "hang", mode="before")
    @classmethod
    def _phases(cls, v: Any) -> Any:
        """Phase names as TOML spells them (strings) to the Phase they name; an unknown name is refused."""
        if not isinstance(v, dict):
            return v
        try:
            return {k if isinstance(k, Phase) else Phase(k): p for k, p in v.items()}
        except ValueError:
            raise ValueError(f"phase names are {', '.join(p.value for p in Phase)}") from None

    @field_validator("phase_error", "hang")
    @classmethod
    def _probs(cls, v: dict[Phase, float]) -> dict[Phase, float]:
        for k, p in v.items():
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"probability for {k.value} must be in [0, 1], got {p}")
        return v

    @property
    def any(self) -> bool:
        return bool(self.phase_error or self.oom_rate or self.hang or self.worker_death_rate
                    or self.corrupt_proof_rate or self.cuda_error_rate or self.nvml_missing or self.vram_leak_bytes)


class RunConfig(BaseModel):
    """One run of the embedded prover."""

    # strict (issue 35): `workers_per_gpu = true` or `2.0`, `paused = "yes"` are refused, not coerced
    # (the budgets' own parse, _shaped, still takes "24GiB" or a number of bytes)
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False, strict=True)

    backend: Backend = "auto"
    gpus: int | list[int] = Field(1, description="number of GPUs, or a list of device ids")
    # the live knobs: types, defaults and allowed values from prover.knobs
    workers_per_gpu: int = Field(KNOBS["workers_per_gpu"].default, ge=KNOBS["workers_per_gpu"].lo,
                                 le=KNOBS["workers_per_gpu"].hi, description=KNOBS["workers_per_gpu"].help)
    lock_mode: str = Field(KNOBS["lock_mode"].default, description=KNOBS["lock_mode"].help)
    mem_sync: str = Field(KNOBS["mem_sync"].default, description=KNOBS["mem_sync"].help)
    prestage: bool = Field(KNOBS["prestage"].default, description=KNOBS["prestage"].help)
    b_g2: str = Field(KNOBS["b_g2"].default, description=KNOBS["b_g2"].help)
    paused: bool = Field(KNOBS["paused"].default, description=KNOBS["paused"].help)
    host_ram_budget: int = Field(KNOBS["host_ram_budget"].default, description=KNOBS["host_ram_budget"].help)
    host_threads: int = Field(KNOBS["host_threads"].default, description=KNOBS["host_threads"].help)
    vram_budget: int | str = Field(KNOBS["vram_budget"].default, description=KNOBS["vram_budget"].help)
    class_gpus: str = Field(KNOBS["class_gpus"].default, description=KNOBS["class_gpus"].help)
    abc: str = Field(KNOBS["abc"].default, description=KNOBS["abc"].help)
    constraints_log2: int = Field(10, ge=8, le=27, description="size of the circuit really proved (2^24 and up want a GPU for setup; docs/scale.md)")
    modelled_log2: int | None = Field(None, ge=10, le=30, description="size the device models (default: the profile's)")
    partitions: int = Field(10, ge=1, le=1000, description="partitions per sector")
    class_log2_offset: dict[str, int] = Field(
        dict(DEFAULT_OFFSETS), description="per proof class, its circuit's log2 against constraints_log2 (and "
        "modelled_log2), e.g. winning = -4: a key per size, kept hot or cold under host_ram_budget; never below 2^8")
    sectors: int | None = Field(None, ge=1, description="sectors to prove; None = keep going")
    profile: str = "rtx5070ti-16g"
    time_scale: float = Field(1.0, gt=0.0, le=100.0, description="sim: phase duration = modelled time x time_scale")
    seed: int = Field(0, ge=0)
    verify_share: float = Field(1.0, ge=0.0, le=1.0, description="share of proofs verified (self-check)")
    prestage_wait_s: float = Field(10.0, ge=0.0, description="mem_sync=stream: longest wait for room (modelled s)")
    vram_sample_s: float = Field(0.15, ge=0.02, le=10.0, description="VRAM sample period (wall seconds; at least "
                                 "0.02: 1e-9 filled a recording past the reader's event bound in ~85 s)")
    health_sample_s: float = Field(1.0, ge=0.0, le=60.0, description="GPU health (NVML) and host CPU / memory "
                                   "pressure sample period (wall seconds; 0: off)")
    cache_dir: str | None = Field(None, pattern=r"\S", description="where proving keys are cached (not empty)")
    insecure_seeded_setup: bool = Field(
        False, description="derive the setup's toxic waste from the seed (reproducible keys; INSECURE: the seed forges proofs)")
    insecure_seeded_proofs: bool = Field(
        False, description="derive each proof's randomisers r, s from the seed (reproducible proof bytes; INSECURE: "
                           "the public seed and the key reveal the witness)")
    faults: FaultsConfig = Field(default_factory=FaultsConfig)
    kernels: KernelSettings = Field(default_factory=KernelSettings.from_env,
                                    description="kernel and setup tunables; C2TUI_* variables override (docs/settings.md)")

    @field_validator("kernels", mode="before")
    @classmethod
    def _kernels(cls, v: Any) -> Any:
        return KernelSettings.from_env(**v) if isinstance(v, dict) else v

    @field_validator(*_CHOICE_KNOBS)
    @classmethod
    def _choice(cls, v: str, info: ValidationInfo) -> str:
        k = KNOBS[info.field_name or ""]
        values = k.values or ()
        if v not in values and not (v == "auto" == k.default):  # read now, not at import: the vocabulary is the one place to extend
            raise ValueError("Input should be " + _one_of(values))
        if v != "auto":
            k.check_runs(v)
        return v

    @field_validator(*_SHAPED_KNOBS, mode="before")
    @classmethod
    def _shaped(cls, v: Any, info: ValidationInfo) -> Any:
        return KNOBS[info.field_name or ""].check(v)  # the knob's one parse, as every other door

    @field_validator("class_log2_offset")
    @classmethod
    def _offsets(cls, v: dict[str, int]) -> dict[str, int]:
        for name, off in v.items():
            if name not in CLASSES:
                raise ValueError(f"unknown proof class {name!r}; known: {', '.join(CLASSES)}")
            if not -16 <= off <= 0:  # a class bigger than the run's c2 would outgrow the workers' buffers
                raise ValueError(f"{name}: a log2 offset in -16..0, got {off}")
        return {**DEFAULT_OFFSETS, **v}

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, v: int | list[int]) -> int | list[int]:
        if isinstance(v, int):
            if not 1 <= v <= bounds.MAX_GPUS_HOST:
                raise ValueError(f"number of GPUs must be 1..{bounds.MAX_GPUS_HOST}")
        else:
            if len(v) > bounds.MAX_GPUS_HOST:
                raise ValueError(bounds.over("a list of GPUs of length", len(v), bounds.MAX_GPUS_HOST))
            if not v or len(set(v)) != len(v) or min(v) < 0 or max(v) > bounds.MAX_GPU_ID:
                raise ValueError(f"a non-empty list of distinct device ids 0..{bounds.MAX_GPU_ID}")
        return v

    @field_validator("profile")
    @classmethod
    def _profile(cls, v: str) -> str:
        from prover.device.profiles import PROFILES

        if v not in PROFILES:
            raise ValueError(f"unknown profile {v!r}; known: {', '.join(sorted(PROFILES))}")
        return v

    @model_validator(mode="after")
    def _sizes(self) -> "RunConfig":
        m = self.modelled_log2
        if m is not None and m < self.constraints_log2:
            raise ValueError("modelled_log2 must be >= constraints_log2")
        from prover.device import budget
        from prover.device.profiles import get_profile

        # "card" on profile native is checked against the device at start (the room's door), and
        # so is a budget beside the circuits' matrices (abc gpu: their bytes are known then)
        abc = "gpu" if self.abc == "gpu" else "host"
        budget.Sizing(get_profile(self.profile), self.modelled, abc=abc).bytes(self.vram_budget)
        return self

    # --- derived --------------------------------------------------------------------------
    @property
    def modelled(self) -> int:
        """The size whose times and buffers are modelled: the one given, else the proved size on
        profile native (it models nothing: sizing its buffers for 2^27 while proving 2^12 was a
        run the header called "native 2^12"), else the profile's."""
        if self.modelled_log2 is not None:
            return self.modelled_log2
        if self.profile == "native":
            return self.constraints_log2
        from prover.device.profiles import get_profile

        return get_profile(self.profile).modelled_log2

    @property
    def class_sizes(self) -> dict[str, ClassSize]:
        """Each proof class's proved and modelled circuit size (prover/classes.py)."""
        return class_sizes(self.constraints_log2, self.modelled, self.class_log2_offset)

    @property
    def gpu_ids(self) -> list[int]:
        return list(range(self.gpus)) if isinstance(self.gpus, int) else list(self.gpus)

    @property
    def n_gpus(self) -> int:
        return len(self.gpu_ids)

    def public_dict(self) -> dict[str, Any]:
        """JSON-friendly dict for RunStarted.config and recording headers."""
        return self.model_dump(mode="json")


def _one_of(values: tuple[str, ...]) -> str:
    """pydantic's own spelling for a Literal: 'a', 'b' or 'c'."""
    q = [repr(v) for v in values]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + " or " + q[-1]


def _cut_repr(got: Any, most: int = 80) -> str:
    """A value as the error shows it, cut: a 60,000-element gpus list made a 180 KB error line."""
    text = repr(got)
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def _format_error(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "config"
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        msg = msg.removeprefix(f"{loc}: ")  # a knob's own parse names it already (the one message every door gives)
        got = err.get("input")
        got_s = "" if isinstance(got, dict) or err["type"] == "missing" else f" (got {_cut_repr(got)})"
        if err["type"] == "extra_forbidden":
            msg, got_s = _unknown_key(err["loc"]), ""
        lines.append(f"{loc}: {msg}{got_s}")
    return "invalid config: " + "; ".join(lines)


def _unknown_key(loc: tuple) -> str:
    """'unknown key; did you mean X?' - the nearest valid key (difflib), not pydantic's words."""
    import difflib

    model: Any = RunConfig
    for part in loc[:-1]:  # a key inside a table ([faults], [kernels]): that table's keys
        ann = model.model_fields[part].annotation if part in model.model_fields else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            break
        model = ann
    near = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1, cutoff=0.5)
    hint = f"did you mean {near[0]!r}?" if near else "see `c2tui config --show` for the keys"
    return f"unknown key; {hint}"


def make_config(data: dict[str, Any]) -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(exc)) from None


def load_config(path: Path | str | None = None, **overrides: Any) -> RunConfig:
    """Read TOML (optional), apply overrides (None = not given), validate.

    The TOML may be flat or hold the keys under a `[run]` table; `[faults]` is the faults
    section. Overrides may use `faults={...}` or `kernels={...}` (merged into the file's table).
    """
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:  # a regular file, bounded: /dev/zero or a FIFO is an error at once, not a hang or MemoryError
            raw = read_input(p, MAX_CONFIG_BYTES, "config file")
        except InputError as exc:
            raise ConfigError(str(exc)) from None
        try:
            doc = bounds.parse_nested(f"config file {p}", tomllib.loads, raw.decode("utf-8"))
        except bounds.BoundError as exc:
            raise ConfigError(str(exc)) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {p} is not valid TOML: {exc}") from None
        if "run" in doc and isinstance(doc["run"], dict):
            run = dict(doc.pop("run"))
            run.update(doc)
            doc = run
        data.update(doc)
    for k, v in overrides.items():
        if v is None:
            continue
        if k in ("faults", "kernels") and isinstance(v, dict) and isinstance(data.get(k), dict):
            merged = dict(data[k])
            merged.update(v)
            data[k] = merged
        else:
            data[k] = v
    return make_config(data)
