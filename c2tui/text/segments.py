"""The segment table (the run split at every knob change) as rich tables: for `summary`,
`record` and `compare`. Rows come from prover.fold.segments.segment_rows."""
from __future__ import annotations

from typing import Sequence

from rich.table import Table
from rich.text import Text

from c2tui.text.fit_table import fit_tables
from c2tui.widgets.alerts import oom_words
from prover import on_off
from prover import SegmentSummary

COLUMNS = ["#", "from", "for", "knobs", "change", "verified", "verified/min", "95% interval", "ratio", "fallbacks",
           "OOMs", "mem wait", "mem hold", "compute held", "device sync (all GPUs)", "transitional"]


def interval_text(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"{ci[0]:.1f}-{ci[1]:.1f}"


def ratio_text(s: SegmentSummary) -> str:
    """"2.83x (2.10-3.81)", "1.02x (0.80-1.30) not significant" while the interval holds 1."""
    if s.ratio is None:
        return "-"
    if s.ratio_ci is None:
        return f"{s.ratio:.2f}x"
    ns = "" if s.ratio_significant else " not significant"
    return f"{s.ratio:.2f}x ({s.ratio_ci[0]:.2f}-{s.ratio_ci[1]:.2f}){ns}"


def transitional_text(s: SegmentSummary) -> str:
    """What sections begun before the segment's switch did in it (never counted as its own)."""
    t = s.transitional
    if not (t.done or t.fallbacks or t.ooms or t.device_syncs):
        return "-"
    bits = [f"{t.verified} verified"] + ([f"{t.fallbacks} fallbk"] if t.fallbacks else [])
    bits += [f"{t.ooms} OOM" + (f" ({t.ooms_retried}↻ {t.ooms_failed}✗)" if t.ooms_retried or t.ooms_failed else "")
             ] if t.ooms else []
    bits += [f"sync {_ms(t.device_sync_s)}"] if t.device_syncs else []
    return ", ".join(bits)


def _ms(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def varying_knobs(segs: Sequence[SegmentSummary]) -> list[str]:
    """The knobs whose value differs between segments (what the table needs to say)."""
    keys: list[str] = []
    for s in segs:
        for k in s.knobs:
            if k not in keys and len({str(x.knobs.get(k)) for x in segs}) > 1:
                keys.append(k)
    return keys


def segment_row(s: SegmentSummary, knobs: Sequence[str], origin: float | None = None) -> list[str]:
    """One row; `origin`: show the start relative to it (an alignment anchor), signed."""
    rate = f"{s.per_min:.1f}" + ("" if s.verified_per_min is not None else " (mean)")
    start = f"{s.t0:.1f} s" if origin is None else f"{s.t0 - origin:+.1f} s"
    return [str(s.index), start, f"{s.duration_s:.1f} s{'+' if s.open else ''}",
            " ".join(f"{k}={on_off(s.knobs.get(k))}" for k in knobs) or "-", s.change or "(start)",
            str(s.verified), rate, interval_text(s.per_min_ci), ratio_text(s), str(s.fallbacks),
            oom_words(s.ooms, s.ooms_retried, s.ooms_failed),
            _ms(s.mem_wait_mean), _ms(s.mem_hold_mean), f"{s.compute_held_share:.0%}",
            f"{_ms(s.device_sync_s)} ({s.device_syncs})" if s.device_syncs else "-", transitional_text(s)]


def segment_tables(segs: Sequence[SegmentSummary], width: int, title: str | None = None,
                   origin: float | None = None) -> list[Table | Text]:
    """The segments, split over tables if the width needs it; nothing for a run without any."""
    if not segs:
        return []
    knobs = varying_knobs(segs)
    title = title or ("segments (split at every knob change; each counts the sections begun under its knobs, "
                      "verified/min steady within each with its proofs and 95% interval, ratio to the one before; "
                      "transitional: sections begun before its switch, not counted in it)")
    return fit_tables(title, COLUMNS, [segment_row(s, knobs, origin) for s in segs], width, left={3, 4})
