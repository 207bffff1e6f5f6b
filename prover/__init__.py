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
    "Summary": "prover.summary", "summarize": "prover.summary",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prover' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
