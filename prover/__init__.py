"""c2tui's prover: an embedded Groth16 (BLS12-381) prover shaped like SupraSeal C2, its
pipeline engine, the event contract and the one fold of events into dashboard state.

The public surface is below (`__all__`); names load on first use, so `import prover` (and the
numeric modules that import `prover.settings`) stays cheap. Everything else is internal.

Two tables say the surface: `_EXPORTS` (with `_MODULES` and `_RENAMED`), what runs, and the
imports under TYPE_CHECKING, what type checkers and editors read (go-to-definition lands on
the real object, not on `__getattr__`). An export is one line in each;
tests/unit/test_door.py keeps them in step and names the line that is missing.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    # running
    "Engine": "prover.pipeline.engine", "BackendError": "prover.pipeline.engine",
    "Controller": "prover.pipeline.control.controller", "Knobs": "prover.pipeline.control.controller",
    "Phases": "prover.pipeline.phases", "EngineHandle": "prover.pipeline.run_handle",
    "KnobFacade": "prover.pipeline.control.knob_facade",
    # configuring
    "RunConfig": "prover.config", "FaultsConfig": "prover.config", "ConfigError": "prover.config",
    "load_config": "prover.config", "KNOBS": "prover.knobs", "Knob": "prover.knobs",
    "parse_switch": "prover.knobs", "parse_knob_set": "prover.knob_set", "knob_set_text": "prover.knob_set",
    "KernelSettings": "prover.settings",
    # events, recordings, state
    "Phase": "prover.events", "SUB_PHASES": "prover.events", "Event": "prover.events", "DashboardState": "prover.fold.model",
    "RecordingWriter": "prover.record", "read_recording": "prover.record", "RecordingError": "prover.record",
    "Summary": "prover.fold.summary", "summarize": "prover.fold.summary", "ArmPace": "prover.fold.arm_pace", "on_off": "prover.fold.segments",
    "GpuState": "prover.fold.parts", "LockState": "prover.fold.parts", "PartitionState": "prover.fold.parts",
    "PhaseStats": "prover.fold.parts", "Segment": "prover.fold.parts", "HistoryPoint": "prover.fold.history", "RecordingHeader": "prover.record",
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
    "parse_target": "prover.pipeline.queue.jobs", "proof_class": "prover.classes", "status_of": "prover.fold.status",
    # proving one circuit outside the engine (c2tui prove / verify)
    "default_cache_dir": "prover.groth16.setup",
    "InputError": "prover.inputs", "open_input": "prover.inputs", "read_input": "prover.inputs",  # bounded reads
    # cuzk's wire (prover/cuzk, docs/cuzk.md): serve it, watch a cuzk daemon, lay its proofs out
    "CuzkServer": "prover.cuzk.server", "CuzkPoller": "prover.cuzk.client", "parse_grpc_address": "prover.cuzk.address",
    "proof_dirs": "prover.cuzk.proof_dir", "ProofDirError": "prover.cuzk.proof_dir", "read_token": "prover.attach.address",
}
# whole modules of the surface: the event classes, the Groth16 phases, the proof files
_MODULES = {"events": "prover.events", "disciplines": "prover.disciplines", "groth16_phases": "prover.groth16.phases", "proof_files": "prover.groth16.export"}
_MODULES["experiment"] = "prover.experiment"  # experiments and the tuner (c2tui experiment, tune)
_MODULES["screen"] = "prover.observe.screen"  # the alert thresholds judged on screen (issue 36)
_RENAMED = {"compare_runs": ("prover.fold.compare", "compare"), "fold_events": ("prover.fold.apply", "fold"), "JOB_ACTIONS": ("prover.pipeline.queue.jobs", "ACTIONS")}
__all__ = sorted(_EXPORTS) + sorted(_MODULES) + sorted(_RENAMED)

if TYPE_CHECKING:  # the same surface for tools, one line a name (never run: the door stays lazy)
    from prover.pipeline.engine import Engine as Engine
    from prover.pipeline.engine import BackendError as BackendError
    from prover.pipeline.control.controller import Controller as Controller
    from prover.pipeline.control.controller import Knobs as Knobs
    from prover.pipeline.phases import Phases as Phases
    from prover.pipeline.run_handle import EngineHandle as EngineHandle
    from prover.pipeline.control.knob_facade import KnobFacade as KnobFacade
    from prover.config import RunConfig as RunConfig
    from prover.config import FaultsConfig as FaultsConfig
    from prover.config import ConfigError as ConfigError
    from prover.config import load_config as load_config
    from prover.knobs import KNOBS as KNOBS
    from prover.knobs import Knob as Knob
    from prover.knobs import parse_switch as parse_switch
    from prover.knob_set import parse_knob_set as parse_knob_set
    from prover.knob_set import knob_set_text as knob_set_text
    from prover.settings import KernelSettings as KernelSettings
    from prover.events import Phase as Phase
    from prover.events import SUB_PHASES as SUB_PHASES
    from prover.events import Event as Event
    from prover.fold.model import DashboardState as DashboardState
    from prover.record import RecordingWriter as RecordingWriter
    from prover.record import read_recording as read_recording
    from prover.record import RecordingError as RecordingError
    from prover.fold.arm_pace import ArmPace as ArmPace
    from prover.fold.summary import Summary as Summary
    from prover.fold.summary import summarize as summarize
    from prover.fold.segments import on_off as on_off
    from prover.fold.parts import GpuState as GpuState
    from prover.fold.parts import LockState as LockState
    from prover.fold.parts import PartitionState as PartitionState
    from prover.fold.parts import PhaseStats as PhaseStats
    from prover.fold.parts import Segment as Segment
    from prover.fold.history import HistoryPoint as HistoryPoint
    from prover.record import RecordingHeader as RecordingHeader
    from prover.config import parse_bytes as parse_bytes
    from prover.device.profiles import PROFILES as PROFILES
    from prover.device.budget import SCENARIOS as SCENARIOS
    from prover.attach.client import AttachClient as AttachClient
    from prover.attach.client import RemoteController as RemoteController
    from prover.attach.server import AttachServer as AttachServer
    from prover.attach.address import AttachError as AttachError
    from prover.attach.address import parse_address as parse_address
    from prover.attach.address import server_token as server_token
    from prover.observe.trace import to_trace as to_trace
    from prover.observe.phase_table import phase_csv as phase_csv
    from prover.observe.metrics import MetricsExporter as MetricsExporter
    from prover.fleet.driver import FleetEngine as FleetEngine
    from prover.fleet.cluster import ClusterError as ClusterError
    from prover.fleet.cluster import parse_cluster as parse_cluster
    from prover.fold.align import ANCHORS as ANCHORS
    from prover.fold.align import resolve_at as resolve_at
    from prover.fold.align import parse_at as parse_at
    from prover.fold.rates import RATE_WINDOW_S as RATE_WINDOW_S
    from prover.fold.compare import Comparison as Comparison
    from prover.fold.compare import ComparedRun as ComparedRun
    from prover.fold.segments import SegmentSummary as SegmentSummary
    from prover.fold.segments import segment_rows as segment_rows
    from prover.disciplines import COMPUTE as COMPUTE
    from prover.disciplines import lock_order as lock_order
    from prover.fold.host_ram import budget_of as budget_of
    from prover.fold.host_ram import is_key as is_key
    from prover.fold.model import starting as starting
    from prover.fold.jobs import CANCELLED as CANCELLED
    from prover.pipeline.queue.jobs import parse_target as parse_target
    from prover.classes import proof_class as proof_class
    from prover.fold.status import status_of as status_of
    from prover.groth16.setup import default_cache_dir as default_cache_dir
    from prover.inputs import InputError as InputError
    from prover.inputs import open_input as open_input
    from prover.inputs import read_input as read_input
    from prover.cuzk.server import CuzkServer as CuzkServer
    from prover.cuzk.client import CuzkPoller as CuzkPoller
    from prover.cuzk.address import parse_grpc_address as parse_grpc_address
    from prover.cuzk.proof_dir import proof_dirs as proof_dirs
    from prover.cuzk.proof_dir import ProofDirError as ProofDirError
    from prover.attach.address import read_token as read_token
    # whole modules
    from prover import events as events
    from prover import disciplines as disciplines
    from prover.groth16 import phases as groth16_phases
    from prover.groth16 import export as proof_files
    from prover import experiment as experiment
    from prover.observe import screen as screen
    # renamed
    from prover.fold.compare import compare as compare_runs
    from prover.fold.apply import fold as fold_events
    from prover.pipeline.queue.jobs import ACTIONS as JOB_ACTIONS


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return import_module(_MODULES[name])
    if name in _RENAMED:  # a surface name that would shadow a submodule of the same name
        module, attr = _RENAMED[name]
        return getattr(import_module(module), attr)
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'prover' has no attribute {name!r}")
    return getattr(import_module(where), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
