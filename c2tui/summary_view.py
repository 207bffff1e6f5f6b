"""The run summary as rich tables (`c2tui summary`, the end of `c2tui record`): rendering of
prover.summary.Summary, whose numbers come from the one fold."""
from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from prover.events import Phase
from prover.state import on_off
from prover.summary import Summary

_PHASE_ORDER = [p.value for p in Phase]  # SupraSeal C2 order


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _ms(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def _gib(n: int) -> str:
    return f"{n / 1024**3:.1f} GiB"


def verdict(sm: Summary) -> tuple[str, str]:
    """One phrase for how the proofs went, and its style; "all proofs verified" only when it is so."""
    if sm.all_proofs_verified:
        return "all proofs verified", "bold green"
    if sm.proofs_failed:
        return f"PROOFS FAILED ({sm.proofs_failed})", "bold red"
    if sm.partitions_failed:
        return f"PARTITIONS FAILED ({sm.partitions_failed}, no proof failed verification)", "bold red"
    if sm.proofs_unchecked or sm.partitions_unchecked:
        return f"{max(sm.proofs_unchecked, sm.partitions_unchecked)} proof(s) never verified", "yellow"
    return "no proofs made", "yellow"


def render(sm: Summary) -> Any:
    """A rich renderable (Group of tables)."""
    sim = " [SIMULATED]" if sm.simulated else ""
    head = Text.assemble(
        (f"c2tui run summary{sim}\n", "bold"),
        f"backend {sm.backend}, profile {sm.profile}, proved 2^{sm.proved_log2}, modelled 2^{sm.modelled_log2}, "
        f"time scale {sm.time_scale:g}, {sm.duration_s:.1f} s, ended: {sm.end_reason or 'no (recording cut short)'}\n",
        "knobs: " + ", ".join(f"{k}={on_off(v)}" for k, v in sm.knobs.items()) + "\n",
    )
    head.append_text(Text.assemble(
        f"partitions ok (verified) {sm.partitions_ok}, unchecked {sm.partitions_unchecked}, failed {sm.partitions_failed}; "
        f"proofs verified {sm.proofs_ok}, failed {sm.proofs_failed}, unchecked {sm.proofs_unchecked}: ", verdict(sm), "\n",
        f"throughput (verified partitions) {sm.throughput_per_min:.2f}/min overall, "
        f"{sm.steady_throughput_per_min:.2f}/min steady",
        (f", {sm.modelled_throughput_per_min:.2f}/modelled min" if sm.modelled_throughput_per_min is not None else ""),
        f"; fallbacks {sm.fallbacks}, OOMs {sm.ooms}, stalls {sm.stalls}, mode changes {sm.mode_changes}",
    ))
    names = "; ".join(f"gpu{g.gpu}: {g.name}{' (simulated)' if g.simulated else ''}{'' if g.simulated or g.nvml else ' (no NVML)'}"
                      for g in sm.gpus)
    gt = Table(title=f"per GPU ({names})", title_justify="left")
    for col in ("gpu", "done", "verified", "verified/min", "busy held", "util", "steady held/util", "fallbacks", "OOMs",
                "mem wait mean", "mem hold mean", "compute wait mean", "compute hold mean", "budget"):
        gt.add_column(col, justify="right")
    for g in sm.gpus:
        gt.add_row(str(g.gpu), str(g.partitions_done), str(g.partitions_verified),
                   f"{g.throughput_per_min:.2f}", f"{g.compute_held_share:.0%}", _pct(g.util_mean),
                   f"{_pct(g.steady_held_share)}/{_pct(g.steady_util_mean)}", str(g.fallbacks), str(g.ooms),
                   _ms(g.mem.wait_mean), _ms(g.mem.hold_mean), _ms(g.compute.wait_mean), _ms(g.compute.hold_mean),
                   _gib(g.budget))
    pt = Table(title="per phase (wall time)", title_justify="left")
    for col in ("phase", "count", "mean", "max", "total", "failed"):
        pt.add_column(col, justify="right" if col != "phase" else "left")
    for name in _PHASE_ORDER + sorted(set(sm.phases) - set(_PHASE_ORDER)):
        ph = sm.phases.get(name)
        if ph is None:
            continue
        pt.add_row(name, str(ph.count), _ms(ph.mean), _ms(ph.max), f"{ph.total:.1f} s", str(ph.failed))
    parts: list[Any] = [head, *_host_table(sm), gt, pt]
    if sm.errors:
        parts.append(Text("errors:\n" + "\n".join(f"  {e}" for e in sm.errors), style="red"))
    return Group(*parts)


def _host_table(sm: Summary) -> list[Any]:
    """Per host, then the fleet's total (nothing on one host)."""
    if not sm.hosts:
        return []
    t = Table(title=f"per host (fleet of {len(sm.hosts)}; {sm.requeued} partition(s) requeued from lost hosts)",
              title_justify="left")
    for col in ("host", "node", "gpus", "done", "failed", "/min", "state", "requeued"):
        t.add_column(col, justify="left" if col in ("host", "node", "state") else "right")
    for h in sm.hosts:
        state = "lost" if h.lost else ("up" if h.alive else "left")
        t.add_row(h.host, h.node, f"{h.gpus[0]}..{h.gpus[-1]}" if h.gpus else "-", str(h.partitions_done),
                  str(h.partitions_failed), f"{h.throughput_per_min:.2f}", state, str(h.requeued))
    t.add_row("fleet", "", str(sum(len(h.gpus) for h in sm.hosts)), str(sm.partitions_ok + sm.partitions_failed),
              str(sm.partitions_failed), f"{sm.throughput_per_min:.2f}", "", str(sm.requeued), style="bold")
    return [t]
