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
    "Phase": "prover.events", "Event": "prover.events", "DashboardState": "prover.state", "fold": "prover.state",
    "RecordingWriter": "prover.record", "read_recording": "prover.record", "RecordingError": "prover.record",
    "Summary": "prover.summary", "summarize": "prover.summary", "on_off": "prover.state",
    "GpuState": "prover.state", "LockState": "prover.state", "PartitionState": "prover.state",
    "PhaseStats": "prover.state", "Segment": "prover.state", "RecordingHeader": "prover.record",
    "parse_bytes": "prover.config", "PROFILES": "prover.device.profiles", "SCENARIOS": "prover.device.budget",
    # operators' surfaces
    "AttachClient": "prover.attach.client", "RemoteController": "prover.attach.client",
    "AttachServer": "prover.attach.server", "AttachError": "prover.attach.address",
    "parse_address": "prover.attach.address", "server_token": "prover.attach.address",
    "to_trace": "prover.observe.trace", "phase_csv": "prover.observe.phase_table",
    "MetricsExporter": "prover.observe.metrics", "FleetEngine": "prover.fleet.driver",
    "ClusterError": "prover.fleet.cluster", "parse_cluster": "prover.fleet.cluster",
    # comparing runs, segments, times (c2tui compare, replay, screenshot)
    "ANCHORS": "prover.align", "resolve_at": "prover.align", "parse_at": "prover.align",
    "RATE_WINDOW_S": "prover.state_rates", "Comparison": "prover.compare", "ComparedRun": "prover.compare",
    "SegmentSummary": "prover.state_segments", "copy_segments": "prover.state_segments",
    "segment_rows": "prover.state_segments",
    # lock disciplines (the registry: prover/disciplines)
    "COMPUTE": "prover.disciplines", "lock_order": "prover.disciplines",
    # operators' resources and actions (host RAM, start-up, classes, jobs, status)
    "budget_of": "prover.state_host_ram", "is_key": "prover.state_host_ram", "starting": "prover.state_startup",
    "CANCELLED": "prover.state_jobs",
    "parse_target": "prover.pipeline.jobs", "proof_class": "prover.classes", "status_of": "prover.status",
    # proving one circuit outside the engine (c2tui prove / verify)
    "default_cache_dir": "prover.groth16.setup",
    "InputError": "prover.inputs", "open_input": "prover.inputs", "read_input": "prover.inputs",  # bounded reads
}
# whole modules of the surface: the event classes, the Groth16 phases, the proof files
_MODULES = {"events": "prover.events", "disciplines": "prover.disciplines", "groth16_phases": "prover.groth16.phases", "proof_files": "prover.groth16.export"}
_RENAMED = {"compare_runs": ("prover.compare", "compare"), "JOB_ACTIONS": ("prover.pipeline.jobs", "ACTIONS")}
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
