"""The figures of the operators' console for the metrics exporter: the fold's own tracker
(prover/fold/ops.py: OOMs by outcome and cause, GPU progress, VRAM growth, GPU and host
health), fed event by event by the exporter (`apply`), so the screen and the metrics compute
them alike. `figures(gpu)` gives thresholds.judge its inputs for one GPU."""
from __future__ import annotations

from prover.fold.ops import GpuProgress, OpsState

OpsFigures = OpsState

__all__ = ["GpuProgress", "OpsFigures"]
