"""The metrics an on-call person alerts on that are not counts: how long each lock has been
held by its current holder and how long its oldest waiter has waited.

Read from the one fold at scrape time (like the rest of prover/observe/metrics.py). Ages are in
run time (the latest event's `t`): the monitor samples VRAM every few tenths of a second while
the run lives, so they advance while a holder is stuck; a wedged process stops answering the
scrape instead (Prometheus' own `up`). docs/alerts/c2tui.rules.yml alerts on them.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from prometheus_client.core import Metric

from prover.state import DashboardState

Gauge = Callable[[str, str, list[str], Any], Any]


def lock_age_families(s: DashboardState, lab: Any, gauge: Gauge) -> Iterator[Metric]:
    held = gauge("lock_held_seconds", "how long the current holder has held the lock (0 when free)",
                 ["gpu", "lock"], lab)
    oldest = gauge("lock_oldest_wait_seconds", "how long the lock's oldest waiter has waited (0: none)",
                   ["gpu", "lock"], lab)
    for i, g in sorted(s.gpus.items()):
        for name, lk in sorted(g.locks.items()):
            held.add_metric(lab.v(i, name), max(0.0, s.t - lk.since) if lk.holder is not None else 0.0)
            first = min((since for _, since in lk.waiters.values()), default=None)
            oldest.add_metric(lab.v(i, name), 0.0 if first is None else max(0.0, s.t - first))
    yield held
    yield oldest
