"""The run summary as rich tables (`c2tui summary`, the end of `c2tui record`): rendering of
prover.fold.summary.Summary, whose numbers come from the one fold. The tables fit the console's
width (the terminal, COLUMNS, or 140 when piped): where a table is too wide its columns are
split over several tables, each repeating the key column, so no value is ever wrapped."""
from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text

from c2tui.text.fit_table import fit_tables, summary_console
from c2tui.text.experiment import experiment_parts
from c2tui.text.segments import segment_tables
from c2tui.widgets.alerts import oom_words

from prover import KNOBS, Phase, Summary, on_off

_PHASE_ORDER = [p.value for p in Phase]  # SupraSeal C2 order


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _ms(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def _gib(n: int) -> str:
    return f"{n / 1024**3:.1f} GiB"


def _knob(name: str, v: Any) -> str:
    k = KNOBS.get(name)
    if k is not None and k.parse_value is not None and not isinstance(v, bool):  # a budget, a placement: as it reads
        try:
            return k.show(v)
        except (TypeError, ValueError):  # a value the knob no longer reads: as recorded
            return str(v)
    return on_off(v)


def knob_list(knobs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_knob(k, v)}" for k, v in knobs.items())


CHANGES_SHOWN = 6  # the knob changes listed between the start and the end; the segments table has them all


def knobs_lines(sm: Summary) -> str:
    """"knobs at the start: ...", the changes between (when, what, from whom) and "at the end: ...";
    one line "knobs (unchanged)" where nothing changed. A run started with --lock-mode reserved
    and changed by attach read `knobs: lock_mode=single`, the end's alone, not said so."""
    start = sm.knobs_at_start or sm.knobs
    changes = [f"{sg.t0:.1f} s {sg.change}" for sg in sm.segments if sg.change]
    if not start and not sm.knobs and not changes:  # a watched cuzk daemon reports none
        return "knobs: not reported\n"
    if start == sm.knobs and not changes:
        return f"knobs (unchanged through the run): {knob_list(sm.knobs)}\n"
    more = f"; +{len(changes) - CHANGES_SHOWN} more (segments below)" if len(changes) > CHANGES_SHOWN else ""
    between = "; ".join(changes[:CHANGES_SHOWN]) + more if changes else "none recorded"
    moved = [k for k in sm.knobs if start.get(k) != sm.knobs[k]]
    return (f"knobs at the start: {knob_list(start)}\n"
            f"changes ({len(changes)}): {between}\n"
            f"knobs at the end: {knob_list(sm.knobs)}" + (f" (changed: {', '.join(moved)})" if moved else "") + "\n")


def _host_ram_line(sm: Summary) -> str:
    h = sm.host_ram
    if h is None:
        return ""
    what = ("modelled" if h.modelled else "native") + (f" 2^{h.log2}" if h.log2 else "")  # 0: not known (cuzk)
    budget = f" of the {_gib(h.budget)} budget" if h.budget else " (no budget)"
    dev = sum(z.device_bytes for z in sm.keys.sizes) if sm.keys else 0
    key = (f"circuits {_gib(h.circuits)}, " if h.circuits else "") + f"key {_gib(h.key)}" + (
        f" on the host + {_gib(dev)} on the GPU" if dev else "")
    return (f"host RAM ({what}): peak {_gib(h.peak)}{budget}, {key}, pinned {_gib(h.pinned)}; "
            f"workers held back {h.waits}x, {h.wait_total:.1f} s in all (longest {h.wait_max:.1f} s)"
            + (f", {h.waiting_at_end} still waiting at the end" if h.waiting_at_end else "") + "\n")


def _keys_line(sm: Summary) -> str:
    k = sm.keys
    if k is None or (len(k.sizes) < 2 and not k.evictions and not any(z.failed for z in k.sizes)):
        return ""  # one key loaded once: the start-up line says it
    sizes = "; ".join(
        f"2^{z.log2} ({'/'.join(z.classes) or 'no sector'}) {_gib(z.bytes)}: {z.loads} load(s)"
        + (f" of {z.load_mean_s:.2f} s" if z.loads else "") + f", {z.evictions} eviction(s)"
        + (f", {z.failed} FAILED" if z.failed else "") for z in k.sizes)
    return (f"keys: {sizes}; partitions waited for a key {k.waits}x, {k.wait_total:.1f} s in all"
            f" (longest {k.wait_max:.1f} s)\n")


def _startup_line(sm: Summary) -> str:
    u = sm.startup
    if u is None:
        return ""
    said = {n: d for n, d in u.details.items() if n == "keys" or "held by" in d}
    steps = ", ".join(f"{n.replace('_', ' ')} {_ms(sec)}" + (f" ({said[n]})" if n in said else "")
                      for n, sec in u.steps.items())
    failed = f"; FAILED: {', '.join(u.failed)}" if u.failed else ""
    return f"start-up {_ms(u.seconds)}: {steps}{failed}{_setup_steps(sm)}\n"


def _setup_steps(sm: Summary) -> str:
    """The run's key's set-up, step by step (a fresh set-up in this run only)."""
    run = [z for z in (sm.keys.sizes if sm.keys else []) if z.log2 == sm.proved_log2 and z.setup_steps]
    if not run:
        return ""
    return "; key set-up: " + ", ".join(f"{n.replace('_', ' ')} {_ms(s)}" for n, s in run[0].setup_steps.items())


def _classes_line(sm: Summary) -> str:
    if set(sm.classes) <= {"c2"} and not any(c.deadlines_missed for c in sm.classes.values()):
        return ""
    return "classes: " + "; ".join(
        f"{n} {c.sectors_done} sector(s) in {c.sector_latency_mean_s:.1f} s (max {c.sector_latency_max_s:.1f} s), "
        f"{c.deadlines_missed} deadline(s) missed" for n, c in sm.classes.items()) + "\n"


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


def print_summary(sm: Summary) -> None:
    summary_console().print(render(sm))


def render(sm: Summary) -> Any:
    """A rich renderable that lays itself out for the width it is given."""
    return SummaryView(sm)


class SummaryView:
    """The summary, its tables folded to the console's width (never a value wrapped)."""

    def __init__(self, sm: Summary) -> None:
        self.sm = sm

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Group(*build(self.sm, options.max_width))


def _basis(n: int, ci: tuple[float, float] | None) -> str:
    """" [95% 121.0-234.0, 38 proofs]": what a rate rests on (docs/figures.md)."""
    return f" [95% {ci[0]:.1f}-{ci[1]:.1f}, {n} proofs]" if ci else f" [{n} proofs]"


def _rates_line(sm: Summary) -> Text:
    since = ""
    if sm.since_change_throughput_per_min is not None and sm.last_change:
        since = (f", {sm.since_change_throughput_per_min:.2f}/min{_basis(sm.since_change_proofs, sm.since_change_ci)} "
                 f"since {sm.last_change} ({sm.since_change_s or 0:.1f} s before the end)")
    return Text.assemble(
        f"throughput (verified partitions): {sm.windowed_throughput_per_min:.2f}/min"
        f"{_basis(sm.windowed_proofs, sm.windowed_ci)} over the last {sm.rate_window_s:g} s{since}, {sm.throughput_per_min:.2f}/min mean since start, "
        f"{sm.steady_throughput_per_min:.2f}/min steady (first to last verified)",
        (f", {sm.modelled_throughput_per_min:.2f}/modelled min" if sm.modelled_throughput_per_min is not None else ""),
        f"; fallbacks {sm.fallbacks}, OOMs {sm.ooms}"
        + (f" ({sm.ooms_retried} retried, {sm.ooms_failed} failed)" if sm.ooms_retried or sm.ooms_failed else "")
        + f", stalls {sm.stalls}, mode changes {sm.mode_changes}")


def _sizes(sm: Summary) -> str:
    """0 is not known (a watched cuzk daemon names its circuits, never their log2)."""
    return f"proved 2^{sm.proved_log2}, modelled 2^{sm.modelled_log2}" if sm.proved_log2 else "sizes unknown"


def _head(sm: Summary) -> Text:
    sim = " [SIMULATED]" if sm.simulated else ""
    head = Text.assemble(
        (f"c2tui run summary{sim}\n", "bold"),
        f"backend {sm.backend}, profile {sm.profile}, {_sizes(sm)}, "
        f"time scale {sm.time_scale:g}, {sm.duration_s:.1f} s, ended: {sm.end_reason or 'no (recording cut short)'}\n",
    )
    head.append(knobs_lines(sm))
    abandoned = ""
    if sm.partitions_abandoned:
        ids = " ".join(sm.abandoned[:8]) + (" ..." if len(sm.abandoned) > 8 else "")
        abandoned = f", abandoned (stopped mid-way) {sm.partitions_abandoned}: {ids}"
    head.append(_host_ram_line(sm))
    head.append(_startup_line(sm))
    head.append(_keys_line(sm))
    head.append(_classes_line(sm))
    head.append_text(Text.assemble(
        f"partitions ok (verified) {sm.partitions_ok}, unchecked {sm.partitions_unchecked}, failed {sm.partitions_failed}"
        f"{abandoned}" + (f", cancelled {sm.partitions_cancelled}" if sm.partitions_cancelled else "")
        + f"; proofs verified {sm.proofs_ok}, failed {sm.proofs_failed}, unchecked {sm.proofs_unchecked}: ",
        verdict(sm), "\n", _rates_line(sm)))
    mixed = " (every arm together: by arm below)" if sm.arm_pace else ""
    for g in sm.gpus:  # what set the pace (prover's pace concept), in its own words
        if g.pace is not None:
            head.append(f"\npace gpu{g.gpu} over the run{mixed}: {g.pace.sentence()}")
    return head


def build(sm: Summary, width: int) -> list[Any]:
    """The summary's parts for a console `width` columns wide."""
    names = "; ".join(f"gpu{g.gpu}: {g.name}{' (simulated)' if g.simulated else ''}{'' if g.simulated or g.nvml else ' (no NVML)'}"
                      for g in sm.gpus)
    gcols = ["gpu", "done", "verified", "verified/min", "busy held", "util", "steady held/util", "fallbacks", "OOMs",
             "mem wait mean", "mem hold mean", "compute wait mean", "compute hold mean", "budget"]
    grows = [[str(g.gpu), str(g.partitions_done), str(g.partitions_verified),
              f"{g.throughput_per_min:.2f}", f"{g.compute_held_share:.0%}", _pct(g.util_mean),
              f"{_pct(g.steady_held_share)}/{_pct(g.steady_util_mean)}", str(g.fallbacks),
              oom_words(g.ooms, g.ooms_retried, g.ooms_failed, compact=True),  # retried vs failed (issue 36)
              _ms(g.mem.wait_mean), _ms(g.mem.hold_mean), _ms(g.compute.wait_mean), _ms(g.compute.hold_mean),
              _gib(g.budget)] for g in sm.gpus]
    prows = []
    for name in _PHASE_ORDER + sorted(set(sm.phases) - set(_PHASE_ORDER)):
        ph = sm.phases.get(name)
        if ph is not None:
            prows.append([name, str(ph.count), _ms(ph.mean), _ms(ph.max), f"{ph.total:.1f} s", str(ph.failed)])
    parts: list[Any] = [_head(sm), *_host_table(sm, width),
                        *fit_tables(f"per GPU ({names})", gcols, grows, width),
                        *fit_tables("per phase (wall time)", ["phase", "count", "mean", "max", "total", "failed"], prows,
                                    width, left={0}),
                        *segment_tables(sm.segments, width)]
    parts += experiment_parts(sm.experiments)  # the arms of any experiment the run held (c2tui/text/experiment.py)
    if sm.arm_pace:  # the run's pace mixes the arms: each arm's own, over its holds
        parts.append(Text("pace by arm (each complete hold's counted part, at most 30 s):\n" + "\n".join(
            f"  gpu{r.gpu} #{r.arm} {r.sentence()}" for r in sm.arm_pace)))
    if sm.errors:
        parts.append(Text("errors:\n" + "\n".join(f"  {e}" for e in sm.errors), style="red"))
    return parts


def _host_table(sm: Summary, width: int) -> list[Any]:
    """Per host, then the fleet's total (nothing on one host)."""
    if not sm.hosts:
        return []
    rows = []
    for h in sm.hosts:
        state = "lost" if h.lost else ("up" if h.alive else "left")
        rows.append([h.host, h.node, f"{h.gpus[0]}..{h.gpus[-1]}" if h.gpus else "-", str(h.partitions_done),
                     str(h.partitions_failed), f"{h.throughput_per_min:.2f}", state, str(h.requeued)])
    rows.append(["fleet", "", str(sum(len(h.gpus) for h in sm.hosts)), str(sm.partitions_ok + sm.partitions_failed),
                 str(sm.partitions_failed), f"{sm.throughput_per_min:.2f}", "", str(sm.requeued)])
    return fit_tables(f"per host (fleet of {len(sm.hosts)}; {sm.requeued} partition(s) requeued from lost hosts)",
                      ["host", "node", "gpus", "done", "failed", "/min", "state", "requeued"], rows, width,
                      left={0, 1, 6}, bold_last=True)
