"""What sets a GPU's pace (prover/fold/pace.py, pace_verdict.py), from events: GPU-bound,
host-bound naming its phase (and whether the cores are saturated), the GPU waiting for prep_msm
under its lock, lock-bound, feed-bound, settling; the one-second buckets against an exact
reading over random schedules; and the committed native recordings read as RESULTS tells them."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from prover import events as ev
from prover.events import Phase
from prover.fold.apply import fold
from prover.fold.model import DashboardState
from prover.fold.pace_verdict import Pace
from prover.record import read_recording

H200 = Path(__file__).resolve().parents[2] / "benchmarks" / "recordings" / "h200"


class Run:
    """Events of one GPU's workers, in time order once sorted."""

    def __init__(self, workers: int = 2, profile: str = "native") -> None:
        self.evs: list = [ev.RunStarted(t=0, backend="sim", simulated=True, profile=profile, proved_log2=10,
                                        modelled_log2=10, gpus=1)]
        self.evs += [ev.WorkerStarted(t=0, gpu=0, worker=f"g0w{i}") for i in range(workers)]
        self.n = 0

    def phase(self, w: str, phase: Phase, t0: float, t1: float, gpu: int | None = 0) -> None:
        part = f"{w}p{self.n}"
        self.evs += [ev.PhaseStart(t=t0, part=part, phase=phase, worker=w, gpu=gpu),
                     ev.PhaseEnd(t=t1, part=part, phase=phase, worker=w, gpu=gpu, duration=t1 - t0)]

    def lock(self, w: str, lock: str, asked: float, got: float, free: float) -> None:
        self.evs += [ev.LockRequested(t=asked, gpu=0, lock=lock, worker=w),
                     ev.LockAcquired(t=got, gpu=0, lock=lock, worker=w, wait=got - asked),
                     ev.LockReleased(t=free, gpu=0, lock=lock, worker=w, hold=free - got)]

    def cores(self, t: float, busy: float, n: int = 16) -> None:
        self.evs.append(ev.HostHealth(t=t, cpu_busy=[busy] * n))

    def partition(self, w: str, t: float, synth: float, section: float, prep_wait: float = 0.0) -> float:
        """synthesis, then compute: NTT-H, (a wait for prep_msm), MSM; returns when it ends."""
        self.n += 1
        self.phase(w, Phase.synthesis, t, t + synth)
        t += synth
        self.lock(w, "compute", t, t, t + section + prep_wait)
        self.phase(w, Phase.ntt_h, t, t + section / 2)
        self.phase(w, Phase.msm, t + section / 2 + prep_wait, t + section + prep_wait)
        return t + section + prep_wait

    def state(self, until: float | None = None) -> DashboardState:
        evs = sorted(self.evs, key=lambda e: e.t)
        return fold([e for e in evs if until is None or e.t <= until])


def _pace(run: Run, at: float) -> Pace:
    s = run.state(at)
    p = s.pace.readout(0, at)
    assert p is not None
    return p


def test_gpu_bound_when_the_lock_is_held_by_kernels():
    run = Run(1)
    t = 0.0
    while t < 60:
        t = run.partition("g0w0", t, synth=0.0, section=1.0)
    p = _pace(run, 60)
    assert p.bound == "gpu" and p.compute_share > 0.95 and p.headline() == "GPU-bound"
    assert "will not help" in p.why() and p.gpu_section_s == pytest.approx(1.0)


@pytest.mark.parametrize(("busy", "words"), [(0.95, "more workers or another discipline will not help"),
                                              (0.2, "more workers or host_threads may help")])
def test_host_bound_names_synthesis_and_says_if_the_cores_are_full(busy, words):
    run = Run(2)
    for w, t in (("g0w0", 0.0), ("g0w1", 5.0)):
        while t < 90:
            t = run.partition(w, t, synth=9.0, section=1.0)
    for t in range(0, 90, 2):
        run.cores(float(t), busy)
    p = _pace(run, 90)
    assert (p.bound, p.what) == ("host", "synthesis") and p.compute_share < 0.3
    assert p.per_partition_s["synthesis"] == pytest.approx(9.0) and words in p.why()
    assert p.cores == 16 and p.cores_busy == pytest.approx(busy)


def test_a_modelled_profiles_host_times_are_said_to_be_the_profiles():
    """Modelled phase times do not shrink with host_threads: the words say so."""
    run = Run(1, profile="rtx5070ti-16g")
    t = 0.0
    while t < 60:
        t = run.partition("g0w0", t, synth=9.0, section=1.0)
    p = _pace(run, 60)
    assert p.bound == "host" and p.modelled_host and "modelled host times" in p.why() and "host_threads" not in p.why()


def test_held_but_waiting_for_prep_msm_under_the_lock():
    run = Run(1)
    t = 0.0
    while t < 60:
        t = run.partition("g0w0", t, synth=0.0, section=0.5, prep_wait=0.5)
    p = _pace(run, 60)
    assert p.compute_share > 0.95 and (p.bound, p.what) == ("host", "prep_msm")
    assert "prep_msm under its lock" in p.why() and p.shares["wait:prep_msm"] == pytest.approx(0.5, abs=0.02)


def test_lock_bound_and_feed_bound():
    run = Run(2)
    t = 0.0
    while t < 60:  # both wait 3 s for mem (a device sync), then 0.5 s of compute each: the GPU idles 3 s in 4
        for i, w in enumerate(("g0w0", "g0w1")):
            run.n += 1
            got = t + 3.0 + 0.5 * i
            run.lock(w, "mem", t, got, got)
            run.lock(w, "compute", got, got, got + 0.5)
            run.phase(w, Phase.ntt_h, got, got + 0.5)
        t += 4.0
    p = _pace(run, 60)
    assert (p.bound, p.what) == ("lock", "mem") and "another discipline" in p.why()
    idle = Run(2)
    idle.partition("g0w0", 0.0, synth=1.0, section=1.0)  # then nothing queued
    assert _pace(idle, 30).bound == "feed"


def test_settling_before_the_first_gpu_section_and_early():
    run = Run(1)
    run.partition("g0w0", 0.0, synth=20.0, section=1.0)
    assert _pace(run, 10).bound == "settling"  # synthesis still running: no GPU section yet
    assert _pace(run, 22).bound == "settling"  # 2 s since the first GPU section
    assert _pace(run, 30).bound != "settling"


def _exact(run: Run, at: float, window: float) -> tuple[float, float]:
    """compute held and synthesis worker-seconds over the window, from the spans themselves."""
    first = min(e.t for e in run.evs if isinstance(e, ev.LockAcquired) and e.lock == "compute")
    lo = max(at - window, first)
    held = sum(max(0.0, min(e.t, at) - max(e.t - e.hold, lo)) for e in run.evs
               if isinstance(e, ev.LockReleased) and e.lock == "compute" and e.t - e.hold < at)
    syn = sum(max(0.0, min(e.t, at) - max(e.t - e.duration, lo)) for e in run.evs
              if isinstance(e, ev.PhaseEnd) and e.phase == Phase.synthesis and e.t - e.duration < at)
    return held / (at - lo), syn


def test_the_buckets_read_what_the_spans_say_over_random_schedules():
    """Random partitions on three workers (phases of any length, odd times): the window's compute
    share is the exact one within the window's first second, every reading, everywhere."""
    rng = random.Random(3)
    for trial in range(12):
        run = Run(3)
        ready = {w: rng.random() * 5 for w in ("g0w0", "g0w1", "g0w2")}  # when each next starts a synthesis
        gpu_free = 0.0
        while min(ready.values()) < 120:  # one compute lock: a section starts when the GPU is free
            w = min(ready, key=lambda k: ready[k])
            run.n += 1
            t0, synth, section = ready[w], rng.uniform(0.1, 25), rng.uniform(0.05, 3)
            run.phase(w, Phase.synthesis, t0, t0 + synth)
            got = max(t0 + synth, gpu_free)
            run.lock(w, "compute", t0 + synth, got, got + section)
            run.phase(w, Phase.ntt_h, got, got + section)
            gpu_free = got + section
            ready[w] = gpu_free + rng.random()
        run.evs = [e for e in run.evs if e.t <= 120]  # cut mid-phase: open spans count to the reading
        at = rng.uniform(40, 120)
        s = run.state(at)
        p = s.pace.readout(0, at)
        held, syn = _exact(run, at, 30.0)
        # held spans overlap one another across workers' locks: shares are of the window
        assert p.compute_share == pytest.approx(held, abs=1.0 / 30 + 1e-6), trial
        workers_s = p.shares.get("synthesis", 0.0) * 3 * p.span_s
        # open spans (cut above) count to the reading: no more than the exact closed ones plus 3 workers' window
        assert syn - 3.0 - 1e-6 <= workers_s <= syn + 3 * p.span_s, trial


@pytest.mark.parametrize(("path", "at", "bound", "what"), [
    (H200 / "scale27" / "n27_narrow_24g.jsonl.gz", 50.0, "host", "synthesis"),
    (H200 / "native" / "n22_stream_card.jsonl.gz", 10.0, "gpu", ""),
    (H200 / "native" / "n22_single_tight.jsonl.gz", 15.0, "host", "prep_msm"),
])
def test_the_native_recordings_read_as_measured(path, at, bound, what):
    """2^27 on the H200 was host-bound on synthesis with its cores mostly idle (RESULTS, "The
    seed's own size"); 2^22 two-lock + stream GPU-bound; 2^22 single held the GPU while it
    waited for prep_msm (single 430 vs two-lock 825 verified/min)."""
    s = DashboardState()
    for e in read_recording(path).events:
        if e.t > at:
            break
        s.apply(e)
    p = s.pace.readout(0, s.t)
    assert (p.bound, p.what) == (bound, what), p
    if bound == "host" and what == "synthesis":
        assert p.cores_busy is not None and p.cores_busy < 0.5 and "host_threads may help" in p.why()
    view = s.view().pace
    assert view.readout(0, s.t) == p  # the view's copy is the reading at the fold's time
    run = s.pace.run(0, s.t)
    assert run is not None and run.span_s > 0
