"""The segment table (the run split at every knob change) as rich tables: for `summary`,
`record` and `compare`. Rows come from prover.fold.segments.segment_rows."""
from __future__ import annotations

from typing import Sequence

from rich.table import Table

from c2tui.fit_table import fit_tables
from prover import on_off
from prover import SegmentSummary

COLUMNS = ["#", "from", "for", "knobs", "change", "verified", "verified/min", "ratio", "fallbacks", "OOMs",
           "mem wait", "mem hold", "compute held", "device sync"]


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
    rate = "-" if s.verified_per_min is None else f"{s.verified_per_min:.1f}"
    start = f"{s.t0:.1f} s" if origin is None else f"{s.t0 - origin:+.1f} s"
    return [str(s.index), start, f"{s.duration_s:.1f} s{'+' if s.open else ''}",
            " ".join(f"{k}={on_off(s.knobs.get(k))}" for k in knobs) or "-", s.change or "(start)",
            str(s.verified), rate, "-" if s.ratio is None else f"{s.ratio:.2f}x", str(s.fallbacks), str(s.ooms),
            _ms(s.mem_wait_mean), _ms(s.mem_hold_mean), f"{s.compute_held_share:.0%}",
            f"{_ms(s.device_sync_s)} ({s.device_syncs})" if s.device_syncs else "-"]


def segment_tables(segs: Sequence[SegmentSummary], width: int, title: str | None = None,
                   origin: float | None = None) -> list[Table]:
    """The segments, split over tables if the width needs it; nothing for a run without any."""
    if not segs:
        return []
    knobs = varying_knobs(segs)
    title = title or "segments (split at every knob change; verified/min steady within each, ratio to the one before)"
    return fit_tables(title, COLUMNS, [segment_row(s, knobs, origin) for s in segs], width, left={3, 4})
