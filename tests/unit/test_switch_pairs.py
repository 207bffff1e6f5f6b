"""benchmarks/switch_pairs.py's schedule: every ordered pair of its five states exactly once,
each reached by the switches it needs (mem_sync before lock_mode), and the recorded ModeChanges
read back as the same transitions. (The run itself is a benchmark: benchmarks/RESULTS.md.)"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import switch_pairs as sp  # noqa: E402
from prover import events as ev  # noqa: E402


def test_the_schedule_visits_every_ordered_pair_once():
    order = sp.euler_circuit(len(sp.STATES))
    pairs = list(zip(order, order[1:]))
    n = len(sp.STATES)
    assert len(pairs) == n * (n - 1) == len(set(pairs)) and all(a != b for a, b in pairs)
    assert order[0] == order[-1] == 0  # starts and ends in the run's first state, two-lock + device


def test_each_transition_sends_what_it_needs_and_reads_back():
    order = sp.euler_circuit(len(sp.STATES))
    cur, t, events, expect = ("two-lock", "device"), 1.0, [], []
    for i in order[1:]:
        to = sp.STATES[i]
        for spec in sp.specs(cur, to):
            knob, value = ("mem_sync", spec.split("=")[1]) if spec.startswith("mem_sync=") else ("lock_mode", spec)
            events.append(ev.ModeChange(t=t, knob=knob, old="x", new=value, source=f"attach:{sp.SOURCE}"))
            t += 0.01
        cur = (to[0], to[1] or cur[1])
        expect.append(sp.name(to) if to[0] != "two-lock" else f"two-lock+{cur[1]}")
        t += 5.0
    got = sp.transitions(events)
    assert [c["to"] for c in got] == expect and len(got) == 20
