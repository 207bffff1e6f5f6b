"""The pace concept's one-second buckets (prover/fold/pace.py) read exactly what a plain list
of the spans says under the buckets' rule, over random schedules that stress how they are kept:
workers' events interleaved out of time order, quiet stretches longer than the window (old
seconds dropped by a scan, not one by one), a key first seen long after the buckets were made
(every bucket grows), spans over many seconds, and a state copied (deepcopy, pickle) mid-run
that folds on as its original does."""
from __future__ import annotations

import copy
import math
import pickle
import random

import pytest

from prover import events as ev
from prover.events import Phase
from prover.fold.model import DashboardState
from prover.fold.pace import HELD, PREP_WAIT

WINDOW = 30.0


def _schedule(rng: random.Random) -> list:
    """Three workers on GPU 0: synthesis, a wait for mem (from mid-run on: a key first seen
    late), the compute lock (NTT-H, a wait for prep_msm, MSM under it), quiet stretches."""
    evs: list = [ev.WorkerStarted(t=0.0, gpu=0, worker=f"w{i}") for i in range(3)]
    evs += [ev.LockRequested(t=0.5, gpu=0, lock="compute", worker="w0"),  # the first GPU section first
            ev.LockAcquired(t=0.5, gpu=0, lock="compute", worker="w0", wait=0.0),
            ev.LockReleased(t=0.7, gpu=0, lock="compute", worker="w0", hold=0.2)]
    ready = {f"w{i}": 1.0 + rng.random() for i in range(3)}
    gpu_free, n = 1.0, 0
    while min(ready.values()) < 200:
        w = min(ready, key=lambda k: ready[k])
        n += 1
        part, t = f"{w}p{n}", ready[w]
        if rng.random() < 0.05:  # a quiet stretch longer than the window
            t += rng.uniform(WINDOW + 2, 3 * WINDOW)
        synth = rng.choice([rng.uniform(0.01, 0.9), rng.uniform(1, 40)])
        evs += [ev.PhaseStart(t=t, part=part, phase=Phase.synthesis, worker=w),
                ev.PhaseEnd(t=t + synth, part=part, phase=Phase.synthesis, worker=w, duration=synth)]
        t += synth
        if t > 100:  # a lock first waited for late in the run
            got = t + rng.uniform(0, 2)
            evs += [ev.LockRequested(t=t, gpu=0, lock="mem", worker=w),
                    ev.LockAcquired(t=got, gpu=0, lock="mem", worker=w, wait=got - t),
                    ev.LockReleased(t=got, gpu=0, lock="mem", worker=w, hold=0.0)]
            t = got
        got = max(t, gpu_free)
        ntt, prep, msm = rng.uniform(0.05, 1.5), rng.choice([0.0, rng.uniform(0, 0.8)]), rng.uniform(0.05, 2)
        end = got + ntt + prep + msm
        evs += [ev.LockRequested(t=t, gpu=0, lock="compute", worker=w),
                ev.LockAcquired(t=got, gpu=0, lock="compute", worker=w, wait=got - t),
                ev.PhaseStart(t=got, part=part, phase=Phase.ntt_h, worker=w, gpu=0),
                ev.PhaseEnd(t=got + ntt, part=part, phase=Phase.ntt_h, worker=w, gpu=0, duration=ntt),
                ev.PhaseStart(t=got + ntt + prep, part=part, phase=Phase.msm, worker=w, gpu=0),
                ev.PhaseEnd(t=end, part=part, phase=Phase.msm, worker=w, gpu=0, duration=msm),
                ev.LockReleased(t=end, gpu=0, lock="compute", worker=w, hold=end - got)]
        gpu_free, ready[w] = end, end + rng.random() * 0.2
    return evs


def _interleave(evs: list, rng: random.Random, jitter: float) -> list:
    """In time order, but a worker's events may come up to `jitter` s late against the others'
    (each worker's own order kept: as events of several threads reach the fold)."""
    keyed = [(e.t + (rng.random() * jitter if getattr(e, "worker", None) else 0.0), i, e) for i, e in enumerate(evs)]
    by_worker: dict[str, list[float]] = {}
    for k, i, e in sorted(keyed, key=lambda x: x[1]):  # a worker's events keep their order
        w = getattr(e, "worker", "")
        k = max(k, by_worker.get(w, [k])[-1])
        by_worker.setdefault(w, []).append(k)
        keyed[i] = (k, i, e)
    return [e for _, _, e in sorted(keyed, key=lambda x: (x[0], x[1]))]


def _reference(evs: list, now: float) -> tuple[dict[str, float], dict[str, tuple[int, float]], float]:
    """Seconds by key in the window ending at `now` under the buckets' rule (a closed span's
    seconds spread over the seconds it covered; the window's first second counted in part),
    spans ended in it by key (their count and seconds), and the span read: from a plain list
    of the spans, closed as the fold closes them (in the events' order; one compute hold open
    a GPU; nothing counted before the first compute acquire)."""
    spans: list[tuple[float, float, str, float]] = []
    opened: dict[tuple[str, str], float] = {}
    first: float | None = None
    hold: float | None = None

    def close(t0: float, t1: float, key: str) -> None:
        if first is not None and t1 > first:
            spans.append((max(t0, first), t1, key, t1 - t0))

    for e in evs:
        w = getattr(e, "worker", "")
        if isinstance(e, ev.PhaseStart):
            if e.phase is Phase.msm and (w, PREP_WAIT) in opened:
                close(opened.pop((w, PREP_WAIT)), e.t, PREP_WAIT)
            opened[(w, e.phase.value)] = e.t
        elif isinstance(e, ev.PhaseEnd):
            close(opened.pop((w, e.phase.value)), e.t, e.phase.value)
            if e.phase is Phase.ntt_h:
                opened[(w, PREP_WAIT)] = e.t
        elif isinstance(e, ev.LockRequested):
            opened[(w, f"wait:{e.lock}")] = e.t
        elif isinstance(e, ev.LockAcquired):
            if e.lock == "compute" and first is None:
                first = e.t
            close(opened.pop((w, f"wait:{e.lock}")), e.t, f"wait:{e.lock}")
            if e.lock == "compute":
                hold = e.t
        elif isinstance(e, ev.LockReleased) and e.lock == "compute":
            close(hold if hold is not None else e.t - e.hold, e.t, HELD)
            hold = None
    assert first is not None
    lo = max(now - WINDOW, first)
    seconds: dict[str, float] = {}
    ended: dict[str, tuple[int, float]] = {}
    for a, t1, key, dur in spans:
        for s in range(int(a), math.floor(t1) + 1):
            weight = 1.0 if s >= lo else max(0.0, 1.0 - (lo - s))
            seconds[key] = seconds.get(key, 0.0) + weight * max(0.0, min(t1, s + 1) - max(a, s))
        if int(t1) > lo - 1:
            n, d = ended.get(key, (0, 0.0))
            ended[key] = (n + 1, d + dur)
    for (_, key), a in opened.items():  # open at the end of the list: read up to now
        seconds[key] = seconds.get(key, 0.0) + max(0.0, now - max(a, lo))
    if hold is not None:
        seconds[HELD] = seconds.get(HELD, 0.0) + max(0.0, now - max(hold, lo))
    return seconds, ended, now - lo


@pytest.mark.parametrize("jitter", [0.0, 0.3, 3.0])
def test_the_buckets_read_what_the_spans_say(jitter):
    rng = random.Random(11 + int(jitter * 10))
    for trial in range(6):
        evs = _interleave(_schedule(rng), rng, jitter)
        cut = rng.uniform(60, 250)
        evs = [e for e in evs if e.t <= cut]
        s, copied = DashboardState(), None
        for i, e in enumerate(evs):
            s.apply(e)
            if copied is None and i > len(evs) // 2:  # a copy mid-run folds on as its original
                copied = pickle.loads(pickle.dumps(copy.deepcopy(s)))
        for e in evs[len(evs) // 2 + 2:]:
            copied.apply(e)
        now = s.t
        seconds, ended, span = _reference(evs, now)
        p = s.pace.readout(0, now)
        assert p is not None and p.span_s == pytest.approx(span, abs=1e-9), trial
        assert p.compute_share * p.span_s == pytest.approx(seconds.get(HELD, 0.0), abs=1e-6), trial
        worker_s = 3 * p.span_s
        for key, secs in seconds.items():
            if key != HELD and secs > 1e-9:
                assert p.shares.get(key, 0.0) * worker_s == pytest.approx(secs, abs=1e-6), (trial, key)
        for key, (n, d) in ended.items():
            if key != HELD:
                assert p.per_partition_s[key] == pytest.approx(d / n, abs=1e-9), (trial, key)
        held = ended.get(HELD)
        assert p.gpu_section_s == (None if held is None else pytest.approx(held[1] / held[0], abs=1e-9)), trial
        assert copied.pace.readout(0, now) == p, trial
        run = s.pace.run(0, now)
        assert run is not None and run.span_s > 0
