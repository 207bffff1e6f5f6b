"""The one fold of events into dashboard state, and what reads it.

    model.py      DashboardState: the core fields, the derived figures, `apply`, `view`
    apply.py      the core's handlers (run, GPUs, partitions, locks, memory, proofs) and `fold`
    concept.py    Concept and the registry (leaf); world.py the surface concepts share (leaf)
    parts.py, rates.py                        the parts' types and the rates' arithmetic
    <concept>.py  one figure each: its sub-state, handlers and view copy, one CONCEPT
    summary.py, status.py, align.py, compare.py   the reading side

The concepts are registered below, the way the lock disciplines are (prover/disciplines/).
The order is the order their handlers run for one event: the queues and the jobs see a
cancelled partition before the core's handlers change it; the segments' and the history's run
after the core's (a ModeChange's new knobs, a RunStarted's config); the pace's after the core's
(a prep_msm span finds its GPU through its partition). A new figure is a module
with its CONCEPT, a line here, and its widget (docs/architecture.md shows one).
"""
from __future__ import annotations

from prover.fold import apply, device_sync, history, host_ram, hosts, jobs, keys, ops, pace, queues, segments, startup
from prover.fold import experiments
from prover.fold.concept import Concept, concepts, register

for _concept in (queues.CONCEPT, jobs.CONCEPT, apply.CONCEPT, device_sync.CONCEPT, hosts.CONCEPT,
                 host_ram.CONCEPT, startup.CONCEPT, keys.CONCEPT, segments.CONCEPT, history.CONCEPT,
                 ops.CONCEPT, pace.CONCEPT):
    register(_concept)
register(experiments.CONCEPT)  # the arms of an experiment (prover/experiment/), counted as the runner counts

__all__ = ["Concept", "concepts", "register"]
