"""A partition's phase bar: one coloured segment per phase in pipeline order, finished
phases full, the current one filling as it advances (its progress events, else its elapsed
time against the mean of that phase so far), pending phases dotted. A sub-phase (r1cs: a, b, c
made on the GPU inside the pre-stage) takes the last cell of its parent's segment, in its colour:
full once done, shaded while it runs."""
from __future__ import annotations


from c2tui.widgets.common import Line, PHASES, SUB_PHASE_OF


def segment_widths(width: int, n: int = len(PHASES)) -> list[int]:
    base, extra = divmod(max(n, width), n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def phase_fraction(p, phase: str, now: float, stats) -> float:
    span = p.phases.get(phase)
    if span is None:
        return 0.0
    if span[1] is not None:
        return 1.0
    frac = p.progress.get(phase)
    st = stats.get(phase) if stats else None
    if st is not None and st.count and st.mean > 0:
        by_time = (now - (span[0] or now)) / st.mean
        frac = max(frac or 0.0, min(0.97, by_time))
    return min(1.0, max(0.0, frac or 0.0))


def render_phase_bar(p, now: float, pal, width: int, stats=None) -> Line:
    bar = Line(no_wrap=True)
    failed = p.ok is False
    subs = {parent: sub for sub, parent in SUB_PHASE_OF.items() if sub in p.phases}
    for phase, w in zip(PHASES, segment_widths(width)):
        sub = subs.get(phase) if w > 1 else None
        if sub is not None:
            w -= 1
        _segment(bar, p, phase, w, now, pal, stats, failed)
        if sub is not None:
            bar.append("█" if p.phases[sub][1] is not None else "░", style=pal[sub])
    return bar


def _segment(bar: Line, p, phase: str, w: int, now: float, pal, stats, failed: bool) -> None:
    """One phase's segment of `w` cells."""
    colour = pal[phase]
    span = p.phases.get(phase)
    if span is None:
        bar.append("·" * w, style=pal["idle"])
        return
    frac = phase_fraction(p, phase, now, stats)
    full = w if frac >= 1.0 else int(frac * w)
    if full:
        bar.append("█" * full, style=pal["fail"] if failed and span[1] is None else colour)
    if w - full:
        # the current phase: a bright head, then its remaining part in shade
        bar.append("▌" if frac > 0 and full < w else "░", style=colour)
        if w - full - 1:
            bar.append("░" * (w - full - 1), style=colour)
