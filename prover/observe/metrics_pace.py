"""The pace in Prometheus terms (prover/fold/pace.py, the dashboard's pace line): per GPU, its
busy share over the pace window (compute held, and the kernels' part of it), what bounds the
rate now (one series a GPU, its labels the verdict), and where its workers' time went.

Read from the one fold at scrape time, like the rest of prover/observe/metrics.py.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from prometheus_client.core import Metric

from prover.fold.model import DashboardState

Gauge = Callable[[str, str, list[str], Any], Any]


def pace_families(s: DashboardState, lab: Any, gauge: Gauge) -> Iterator[Metric]:
    held = gauge("gpu_busy_share", "share of the pace window the GPU's compute lock was held (its busy share)",
                 ["gpu"], lab)
    kernels = gauge("gpu_kernel_share", "share of the pace window in the GPU section's kernel phases", ["gpu"], lab)
    bound = gauge("pace_bound", "1 for what bounds the GPU's rate now: bound gpu|host|lock|upload|feed|settling, "
                  "what the host phase or lock (docs/metrics.md)", ["gpu", "bound", "what"], lab)
    shares = gauge("pace_worker_share", "share of the GPU's workers' time in each activity over the pace window "
                   "(phases, wait:LOCK, wait:prep_msm, wait:host_ram)", ["gpu", "activity"], lab)
    cores = gauge("pace_host_cores_busy_share", "the host cores' mean busy share over the pace window (HostHealth)",
                  [], lab)
    busy = None
    for i, p in s.pace.readouts(s.t).items():
        held.add_metric(lab.v(i), p.compute_share)
        kernels.add_metric(lab.v(i), p.kernel_share)
        bound.add_metric(lab.v(i, p.bound, p.what), 1.0)
        for activity, share in p.shares.items():
            shares.add_metric(lab.v(i, activity), share)
        busy = p.cores_busy if p.cores_busy is not None else busy
    if busy is not None:
        cores.add_metric(lab.v(), busy)
    yield from (held, kernels, bound, shares, cores)
