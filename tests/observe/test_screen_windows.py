"""The screen's windows and `for:` are the alert rules' (issue 42: a screen window of 660 s where
the PromQL says [10m], and a `for:` 10% late, survived the suite). One event stream goes through
both: the fold the screen judges (prover/observe/screen.py) and the exporter whose counters the
PromQL reads (prover/observe/metrics.py), evaluated here as Prometheus would, with the range and
the `for:` read from the generated rules' own text."""
from __future__ import annotations

import re
from typing import Any, Callable

import pytest

from prover import events as ev
from prover.fold.apply import fold
from prover.fold.ops import KEEP_S
from prover.observe import screen
from prover.observe.metrics import MetricsFold, families
from prover.observe.thresholds import FIGURES, RULES

T = 3000.0  # the evaluation time: every window lies inside the run
START = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8, gpus=1,
                       config={}),
         ev.GpuInfo(t=0.0, gpu=0, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 30, simulated=True)]


def _range_s(promql: str) -> float:
    """The PromQL's range, read from its text ([10m] -> 600): independent of the code under test."""
    (n, unit), = set(re.findall(r"\[(\d+)([smh])\]", promql))
    return float(n) * {"s": 1, "m": 60, "h": 3600}[unit]


def _done(t: float, part: str) -> list[Any]:
    return [ev.PhaseStart(t=t - 0.5, part=part, phase=ev.Phase.msm, worker="g0w0", gpu=0),
            ev.PartitionDone(t=t, part=part, ok=True, seconds=1.0)]


# figure -> (an event at time t that the figure counts, the exporter's counter and its labels)
Make = Callable[[float, str], list[Any]]
CASES: dict[str, tuple[Make, str, dict[str, str]]] = {
    "fallbacks_per_min": (lambda t, p: [ev.Fallback(t=t, gpu=0, part=p, worker="g0w0", reason="no room")],
                          "c2tui_fallbacks", {}),
    "ooms_retried_per_min": (lambda t, p: [ev.Oom(t=t, gpu=0, part=p, worker="g0w0", requested=1, free=0,
                                                  outcome="retried", cause="budget")], "c2tui_ooms", {"outcome": "retried"}),
    "ooms_failed": (lambda t, p: [ev.Oom(t=t, gpu=0, part=p, worker="g0w0", requested=1, free=0, outcome="failed",
                                         cause="budget")], "c2tui_ooms", {"outcome": "failed"}),
    "proofs_failed": (lambda t, p: [ev.PhaseStart(t=t - 0.5, part=p, phase=ev.Phase.msm, worker="g0w0", gpu=0),
                                    ev.ProofResult(t=t, part=p, ok=False, checked=True, reason="bad")],
                      "c2tui_proofs", {"outcome": "failed"}),
    "stalls": (lambda t, p: [ev.Stall(t=t, what="lock", gpu=0, worker="g0w0", part=p, name="compute", seconds=200.0)],
               "c2tui_stalls", {}),
}


def _counter(f: MetricsFold, name: str, labels: dict[str, str]) -> float:
    return sum(s.value for m in families(f) if m.name == name for s in m.samples
               if all(s.labels.get(k) == v for k, v in labels.items()))


def _stream(make: Make, window: float) -> list[Any]:
    """One counted event just outside the range, two just inside, one long before."""
    out = list(START)
    for i, t in enumerate((100.0, T - window - 30.0, T - window + 30.0, T - 10.0)):
        out += make(t, f"p{i}")
    return sorted(out + [ev.Note(t=T, level="info", text="now")], key=lambda e: e.t)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_stream_through_the_screen_and_the_promql_gives_one_figure(name: str) -> None:
    make, metric, labels = CASES[name]
    fig = FIGURES[name]
    window = _range_s(fig.promql)
    events = _stream(make, window)
    f = MetricsFold()
    for e in events:  # the exporter, scraped at T - window and at T
        if e.t > T - window:
            break
        f.apply(e)
    before = _counter(f, metric, labels)
    for e in events:
        if e.t > T - window:
            f.apply(e)
    increase = _counter(f, metric, labels) - before
    promql = increase * 60.0 / window if "rate(" in fig.promql else increase
    assert increase == 2, "the stream puts two of its events inside the range"
    assert screen.run_figures(fold(events))[name] == pytest.approx(promql), (name, window)


def test_the_fallback_share_is_over_the_same_range_as_its_promql() -> None:
    window = _range_s(FIGURES["fallback_share"].promql)
    events = list(START)
    for i, t in enumerate((T - window - 30.0, T - window + 30.0, T - 20.0)):
        events += _done(t, f"p{i}") + [ev.Fallback(t=t, gpu=0, part=f"p{i}", worker="g0w0", reason="r")]
    events += _done(T - 15.0, "q") + [ev.Note(t=T, level="info", text="now")]
    assert screen.run_figures(fold(events))["fallback_share"] == pytest.approx(2 / 3)


def _prometheus_fires(f_at: Callable[[float], float], cond: Callable[[float], bool], for_s: float,
                      times: list[float]) -> float | None:
    """The first evaluation time at which the condition has held at every evaluation for
    `for_s` (Prometheus' pending -> firing), evaluating every second."""
    since = None
    for t in times:
        if cond(f_at(t)):
            since = t if since is None else since
            if t - since >= for_s:
                return t
        else:
            since = None
    return None


@pytest.mark.parametrize("level", ["amber", "red"])
def test_a_held_lock_fires_on_screen_when_prometheus_would(level: str) -> None:
    """C2tuiLockStalled: the exporter's c2tui_lock_held_seconds past its number for the rule's
    `for:` (read from the rule's text): the screen's GPU verdict turns at the same second."""
    rule = next(r for r in RULES if r.alert == "C2tuiLockStalled" and r.level == level)
    (cond,) = rule.conds
    for_s = _range_s(f"[{rule.for_}]")
    acquired = [*START, ev.LockAcquired(t=10.0, gpu=0, lock="compute", worker="g0w0", part="p", wait=0.0)]
    times = [float(t) for t in range(11, int(10 + cond.value + for_s + 30))]
    f = MetricsFold()
    for e in acquired:
        f.apply(e)

    def held(t: float) -> float:
        f.apply(ev.Note(t=t, level="info", text="tick"))
        return _counter(f, "c2tui_lock_held_seconds", {"gpu": "0", "lock": "compute"})

    fires = _prometheus_fires(held, lambda v: v > cond.value, for_s, times)
    assert fires is not None
    on_screen = next(t for t in times if screen.gpu_verdict(fold([*acquired, ev.Note(t=t, level="info", text="t")]), 0)
                     .level in (level, "red"))
    assert on_screen == fires, (on_screen, fires)


def test_the_fold_keeps_every_window_a_figure_looks_back_over() -> None:
    assert max(f.window_s or 0.0 for f in FIGURES.values()) <= KEEP_S
    assert all(f.window_s == _range_s(f.promql) for f in FIGURES.values() if "[" in f.promql)
    assert all(r.for_s == (_range_s(f"[{r.for_}]") if r.for_ else 0.0) for r in RULES)
