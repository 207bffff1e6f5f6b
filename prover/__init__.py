"""c2tui's prover: an embedded Groth16 (BLS12-381) prover shaped like SupraSeal C2, its
pipeline engine, the event contract and the one fold of events into dashboard state.

The public surface is below (`__all__`); names load on first use, so `import prover` (and the
numeric modules that import `prover.settings`) stays cheap. Everything else is internal.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    # running
    "Engine": "prover.pipeline.engine", "BackendError": "prover.pipeline.engine",
    "Controller": "prover.pipeline.controller", "Knobs": "prover.pipeline.controller",
    "Phases": "prover.pipeline.phases",
    # configuring
    "RunConfig": "prover.config", "FaultsConfig": "prover.config", "ConfigError": "prover.config",
    "load_config": "prover.config", "KNOBS": "prover.knobs", "Knob": "prover.knobs",
    "parse_switch": "prover.knobs", "KernelSettings": "prover.settings",
    # events, recordings, state
    "Phase": "prover.events", "Event": "prover.events", "DashboardState": "prover.fold.model",
    "RecordingWriter": "prover.record", "read_recording": "prover.record", "RecordingError": "prover.record",
    "Summary": "prover.fold.summary", "summarize": "prover.fold.summary", "on_off": "prover.fold.segments",
    "GpuState": "prover.fold.parts", "LockState": "prover.fold.parts", "PartitionState": "prover.fold.parts",
    "PhaseStats": "prover.fold.parts", "Segment": "prover.fold.parts", "RecordingHeader": "prover.record",
    "parse_bytes": "prover.config", "PROFILES": "prover.device.profiles", "SCENARIOS": "prover.device.budget",
    # operators' surfaces
    "AttachClient": "prover.attach.client", "RemoteController": "prover.attach.client",
    "AttachServer": "prover.attach.server", "AttachError": "prover.attach.address",
    "parse_address": "prover.attach.address", "server_token": "prover.attach.address",
    "to_trace": "prover.observe.trace", "phase_csv": "prover.observe.phase_table",
    "MetricsExporter": "prover.observe.metrics", "FleetEngine": "prover.fleet.driver",
    "ClusterError": "prover.fleet.cluster", "parse_cluster": "prover.fleet.cluster",
    # comparing runs, segments, times (c2tui compare, replay, screenshot)
    "ANCHORS": "prover.fold.align", "resolve_at": "prover.fold.align", "parse_at": "prover.fold.align",
    "RATE_WINDOW_S": "prover.fold.rates", "Comparison": "prover.fold.compare", "ComparedRun": "prover.fold.compare",
    "SegmentSummary": "prover.fold.segments", "segment_rows": "prover.fold.segments",
    # lock disciplines (the registry: prover/disciplines)
    "COMPUTE": "prover.disciplines", "lock_order": "prover.disciplines",
    # operators' resources and actions (host RAM, start-up, classes, jobs, status)
    "budget_of": "prover.fold.host_ram", "is_key": "prover.fold.host_ram", "starting": "prover.fold.model",
    "CANCELLED": "prover.fold.jobs",
    "parse_target": "prover.pipeline.jobs", "proof_class": "prover.classes", "status_of": "prover.fold.status",
    # proving one circuit outside the engine (c2tui prove / verify)
    "default_cache_dir": "prover.groth16.setup",
}
# whole modules of the surface: the event classes, the Groth16 phases, the proof files
_MODULES = {"events": "prover.events", "disciplines": "prover.disciplines", "groth16_phases": "prover.groth16.phases", "proof_files": "prover.groth16.export"}
_RENAMED = {"compare_runs": ("prover.fold.compare", "compare"), "fold_events": ("prover.fold.apply", "fold"), "JOB_ACTIONS": ("prover.pipeline.jobs", "ACTIONS")}
__all__ = sorted(_EXPORTS) + sorted(_MODULES) + sorted(_RENAMED)


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return import_module(_MODULES[name])
    if name in _RENAMED:  # a surface name that would shadow a submodule of the same name
        module, attr = _RENAMED[name]
        return getattr(import_module(module), attr)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prover' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
