"""The alert thresholds on screen: the figures of prover/observe/thresholds.py computed from the
fold (the same definition docs/alerts/c2tui.rules.yml is generated from), and the verdicts the
header and the panels show: ok, amber or red, and why.

A rule's `for:` is kept as Prometheus keeps it, from what the fold has: an age (a lock held, a
GPU without progress) must be past its number for that long (the age less the `for:`), a
sampled share (live VRAM of its budget) must have stayed past it over the whole `for:`, and a
rate or share that has no samples to look back on (host RAM of its budget, rates over a window)
is judged once the run has lasted the `for:`. A window the run has not lived through yet is the
run so far (at least a minute), as Prometheus' rate() over a short series is. Every window and
every `for:` is read from the one definition (Figure.window_s: the range in the figure's PromQL;
Rule.for_s), never written here. `run_figures` are the run's (the header's), `gpu_figures` one
GPU's (its panel's), `host_figures` the host's.
"""
from __future__ import annotations

from typing import Any

from prover.fold.host_ram import budget_of
from prover.fold.model import DashboardState
from prover.observe.thresholds import FIGURES, ORDER, RULES, Rule, Verdict, judge, rules_on

def window(name: str) -> float:
    """The range the figure's PromQL looks back over (prover/observe/thresholds.py)."""
    w = FIGURES[name].window_s
    assert w is not None, f"{name} has no range in its PromQL"
    return w


GPU_FIGURES = ("lock_held_s", "gpu_progress_age_s", "vram_growth", "vram_partitions_left", "vram_live_share",
               "device_sync_share", "device_sync_wait_s", "ooms_failed", "ooms_switch", "ooms_budget",
               "ooms_unexplained")
HOST_FIGURES = ("host_ram_share", "host_ram_waiting")


def _per_min(o: Any, what: str, window: float, now: float) -> float:
    return o.amount(what, window, now=now) / (_span(window, now) / 60.0)


def _span(window: float, now: float) -> float:
    """The window, or the run so far when shorter (at least a minute)."""
    return max(60.0, min(window, now))


def _gpu(s: DashboardState, i: int) -> dict[str, float | None]:
    o, now, g = s.ops, s.t, s.gpus[i]
    held = [now - lk.since for lk in g.locks.values() if lk.holder is not None]
    sync = g.device_sync.waited(now) if g.device_sync is not None else None
    live = g.live_bytes / g.budget if g.budget else None
    prog = o.progress.get(i)
    sync_w = window("device_sync_share")
    return {
        "lock_held_s": max(held, default=None), "gpu_progress_age_s": prog.age(now) if prog is not None else None,
        "vram_growth": o.growth_slope(i) or None, "vram_partitions_left": o.partitions_left(i),
        "vram_live_share": live, "device_sync_share": o.amount("device_sync", sync_w, i, now) / _span(sync_w, now),
        "device_sync_wait_s": sync, "ooms_failed": o.amount("oom_failed", window("ooms_failed"), i, now),
        "ooms_switch": o.amount("oom_switch", window("ooms_switch"), i, now),
        "ooms_budget": o.amount("oom_budget", window("ooms_budget"), i, now),
        "ooms_unexplained": o.amount("oom_unexplained", window("ooms_unexplained"), i, now),
    }


def gpu_figures(s: DashboardState, i: int) -> dict[str, float | None]:
    """One GPU's figures (its panel judges them)."""
    return _gpu(s, i) if i in s.gpus else {}


def host_figures(s: DashboardState) -> dict[str, float | None]:
    o, now, h = s.ops, s.t, s.host_ram
    budget = budget_of(s.knobs)
    w = window("host_ram_waiting")
    open_s = sum(now - max(since, now - w) for since in o.host_waiting.values())
    return {"host_ram_share": h.used / budget if budget else None,
            "host_ram_waiting": (o.amount("host_ram_wait", w, now=now) + open_s) / _span(w, now)}


def run_figures(s: DashboardState) -> dict[str, float | None]:
    """Every figure the thresholds name, for the run: a GPU figure at its worst GPU."""
    o, now = s.ops, s.t
    share_w = window("fallback_share")
    done, fb = o.amount("done", share_w, now=now), o.amount("fallback", share_w, now=now)
    out: dict[str, float | None] = {
        "fallback_share": fb / done if done else None,
        "fallbacks_per_min": _per_min(o, "fallback", window("fallbacks_per_min"), now),
        "proofs_failed": o.amount("proof_failed", window("proofs_failed"), now=now),
        "ooms_retried_per_min": _per_min(o, "oom_retried", window("ooms_retried_per_min"), now),
        "stalls": o.amount("stall", window("stalls"), now=now),
        "deadlines_missed": o.amount("deadline_missed", window("deadlines_missed"), now=now),
        "sectors_overdue": float(len(s.queues.overdue(now))),
    }
    per_gpu = [_gpu(s, i) for i in s.gpus]
    for name in GPU_FIGURES:
        vals = [v for f in per_gpu if (v := f.get(name)) is not None]
        low = any(c.figure == name and c.op == "<" for r in RULES for c in r.conds)  # worse when smaller
        out[name] = (min(vals) if low else max(vals)) if vals else None
    out.update(host_figures(s))
    return out


AGES = ("lock_held_s", "gpu_progress_age_s")  # grow with time while the condition holds
SAMPLED = {"vram_live_share"}  # the least sample over the `for:` (prover/fold/ops.py keeps them)


def for_seconds(r: Rule) -> float:
    """A rule's `for:` in seconds (0: none): Rule.for_s, read from the text the rules file has."""
    return r.for_s


def _held(s: DashboardState, figs: dict[str, float | None], for_s: float, gpu: int | None) -> dict[str, float | None]:
    """The figures as a rule with `for: for_s` sees them (the module's docstring says how)."""
    if not for_s:
        return figs
    out = dict(figs)
    for name, v in figs.items():
        if v is None:
            continue
        if name in AGES:
            out[name] = v - for_s
        elif name in SAMPLED:
            gpus = [gpu] if gpu is not None else list(s.gpus)
            least = [x for i in gpus if (x := s.ops.least(f"{name}/{i}", for_s, i, s.t)) is not None]
            out[name] = max(least) if least else None
        elif s.t < for_s:
            out[name] = None
    return out


def _judge(s: DashboardState, figs: dict[str, float | None], rules: tuple[Rule, ...], gpu: int | None = None
           ) -> list[Verdict]:
    got: list[Verdict] = []
    for for_s in sorted({for_seconds(r) for r in rules}):
        got += judge(_held(s, figs, for_s, gpu), [r for r in rules if for_seconds(r) == for_s])
    return sorted(got, key=lambda v: -ORDER[v.level])


def verdicts(s: DashboardState) -> list[Verdict]:
    """Every rule the run meets now, worst first (the header shows the first and counts the rest)."""
    return _judge(s, run_figures(s), RULES)


def _worst(got: list[Verdict]) -> Verdict:
    return got[0] if got else Verdict("ok", "")


def run_verdict(s: DashboardState) -> Verdict:
    return _worst(verdicts(s))


_GPU_RULES: tuple[Rule, ...] = rules_on(GPU_FIGURES)
_HOST_RULES: tuple[Rule, ...] = rules_on(HOST_FIGURES)


def gpu_verdict(s: DashboardState, i: int) -> Verdict:
    """One GPU panel's level and why, from the rules on its own figures."""
    return _worst(_judge(s, gpu_figures(s, i), _GPU_RULES, i))


def host_verdict(s: DashboardState) -> Verdict:
    return _worst(_judge(s, host_figures(s), _HOST_RULES))


__all__ = ["FIGURES", "GPU_FIGURES", "HOST_FIGURES", "gpu_figures", "gpu_verdict", "host_figures", "host_verdict",
           "run_figures", "run_verdict", "verdicts"]
