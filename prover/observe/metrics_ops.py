"""The metrics an on-call person alerts on beside the counts: how long each lock has been
held by its current holder and how long its oldest waiter has waited; host memory by owner
against its budget, the pinned share, and the workers the budget holds back; keys by size (hot,
loading) with their loads and evictions.

Read from the one fold at scrape time (like the rest of prover/observe/metrics.py). Ages are in
run time (the latest event's `t`): the monitor samples VRAM every few tenths of a second while
the run lives, so they advance while a holder is stuck; a wedged process stops answering the
scrape instead (Prometheus' own `up`). docs/alerts/c2tui.rules.yml alerts on them.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from prometheus_client.core import Metric

from prover.fold.model import DashboardState
from prover.fold.host_ram import budget_of

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


def host_ram_families(s: DashboardState, lab: Any, gauge: Gauge, counter: Any) -> Iterator[Metric]:
    h = s.host_ram
    used = gauge("host_ram_bytes", "host bytes by owner kind: key (proving keys), workers (their buffers)",
                 ["owner"], lab)
    for kind, n in h.by_kind().items():
        used.add_metric(lab.v(kind), n)
    yield used
    for name, doc, value in (
            ("host_ram_budget_bytes", "the host_ram_budget knob (0: no budget)", budget_of(s.knobs)),
            ("host_ram_pinned_bytes", "page-locked host bytes among them", h.pinned_bytes),
            ("host_ram_total_bytes", "the host's physical memory", h.total),
            ("host_ram_waiters", "workers held back by the host-RAM budget", len(h.waiters)),
            ("host_ram_workers", "workers holding their host buffers", h.workers_held())):
        g = gauge(name, doc, [], lab)
        g.add_metric(lab.v(), value)
        yield g
    yield counter("host_ram_waits", "times a worker was held back for host RAM", [], {(): h.waits}, lab)
    yield counter("host_ram_wait_seconds", "seconds workers waited for host RAM", [], {(): h.wait_total}, lab)


def queue_families(s: DashboardState, lab: Any, gauge: Gauge, counter: Any) -> Iterator[Metric]:
    parts = gauge("queue_partitions", "partitions by proof class: queued (not started) or in flight",
                  ["class", "state"], lab)
    oldest = gauge("queue_oldest_seconds", "age of the oldest queued partition of the class (0: none)", ["class"], lab)
    overdue = gauge("sectors_overdue", "unfinished sectors past their deadline", ["class"], lab)
    late = {c: 0 for c in s.queues.classes}
    for _, c, _ in s.queues.overdue(s.t):
        late[c] = late.get(c, 0) + 1
    for name, c in s.queues.classes.items():
        parts.add_metric(lab.v(name, "queued"), len(c.queued))
        parts.add_metric(lab.v(name, "in_flight"), len(c.in_flight))
        oldest.add_metric(lab.v(name), c.oldest(s.t))
        overdue.add_metric(lab.v(name), late.get(name, 0))
    yield from (parts, oldest, overdue)
    yield counter("partitions_cancelled", "partitions cancelled by a job action (never counted as failed)", [],
                  {(): s.jobs.cancelled}, lab)
    cordoned = gauge("gpu_cordoned", "1 while the GPU is cordoned (no new work)", ["gpu"], lab)
    for i in sorted(s.gpus):
        cordoned.add_metric(lab.v(i), float(i in s.jobs.cordoned))
    yield cordoned
    yield counter("deadlines_missed", "sectors that missed their deadline (reported once each)", ["class"],
                  {(n,): c.missed for n, c in s.queues.classes.items()}, lab)


def key_families(s: DashboardState, lab: Any, gauge: Gauge, counter: Any) -> Iterator[Metric]:
    """Keys by size (prover/pipeline/keys/key_ring.py): each one's host bytes while hot or loading,
    its state, and the loads, evictions and failed loads counted."""
    ks = s.keys.keys
    held = gauge("key_bytes", "host bytes of the proving key of a size while hot or loading (0: cold)",
                 ["log2", "state"], lab)
    for log2, k in sorted(ks.items()):
        for state in ("loading", "hot"):
            held.add_metric(lab.v(log2, state), k.bytes if k.state == state else 0)
    yield held
    for name, doc, attr in (("key_loads", "proving keys made hot (read from the cache or set up)", "loads"),
                            ("key_evictions", "hot proving keys made cold to make room", "evictions"),
                            ("key_load_failures", "key loads failed or refused (did not fit the budget)", "failed")):
        yield counter(name, doc, ["log2"], {(log2,): getattr(k, attr) for log2, k in ks.items()}, lab)
    yield counter("key_wait_seconds", "seconds partitions waited for their key", [], {(): s.keys.wait_total}, lab)
