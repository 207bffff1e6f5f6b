"""How the dashboard shares the screen: a pure function of the terminal size and what there is
to show (GPUs, their lanes, segments), so every size from 80x24 to 220x60 is used and can be
tested without a terminal.

Panels get their least useful height first, then what is left goes to them in order of
use: the GPU panels up to their full height, the history, the segments, the event log, and
the partition table takes the rest. Where even the least does not fit, the history goes
first, then the segments, then the event log (`e` shows it on its own screen), and the GPU
panels scroll (the overview names the ones off screen).

Wide (>= WIDE columns): the history sits beside the GPU panels and the event log beside the
partitions; narrow: each is a full-width row.
"""
from __future__ import annotations

from dataclasses import dataclass

WIDE = 150
PANEL_W = 60  # a GPU panel's least useful width: lock lanes and a 50-cell timeline
PANEL_CHROME = 2  # border
PANEL_FIXED = 6  # util, pace, mem, compute, VRAM bar, its legend
PANEL_MIN = PANEL_CHROME + 4  # mem, compute, VRAM bar, one lane (the rest: "+N more")
HISTORY_MIN, SEGMENTS_MIN, PARTITIONS_MIN, EVENTS_MIN = 5, 4, 7, 5
EVENTS_WANT = 10
TOP_SHARE = 0.6
HISTORY_BAND = 18


@dataclass(frozen=True)
class Plan:
    wide: bool
    gpu_cols: int
    panel_h: int  # each GPU panel
    gpus_h: int  # the panels' box (it scrolls when the panels are taller)
    history_h: int  # 0: hidden
    history_w: int  # wide: the history's width beside the panels; narrow: the full width
    segments_h: int
    side_h: int  # partitions (and, wide, the event log beside them)
    events_h: int  # 0: hidden (narrow: below the partitions; wide: beside them, side_h)

    @property
    def top_h(self) -> int:
        return max(self.gpus_h, self.history_h) if self.wide else self.gpus_h + self.history_h


def panel_full(lanes: int) -> int:
    """A GPU panel with every line and one lane per worker, and the timeline's axis."""
    return PANEL_CHROME + PANEL_FIXED + max(1, lanes) + 1


def history_want(ngpu: int) -> int:
    """Border, change marks, axis, and the rows: the run's 4 (several GPUs) + 7 per GPU."""
    return 2 + 2 + (4 if ngpu > 1 else 0) + 7 * max(1, ngpu)


def plan(width: int, height: int, *, ngpu: int, lanes: int, segments: int, history_first: bool = False) -> Plan:
    """`height`: the rows below the header and replay bar and above the footer.
    `history_first` (the `h` key, stacked layouts only): the history in the partitions' and
    the event log's place, for terminals too short to show it beside them."""
    wide = width >= WIDE
    history_first = history_first and not wide
    ngpu = max(1, ngpu)
    history_w = max(44, min(96, int(width * 0.4))) if wide else width
    cols = max(1, min(ngpu, ((width - history_w - 1) if wide else width) // PANEL_W))
    rows = -(-ngpu // cols)
    full, hist_want, seg_want = panel_full(lanes), history_want(ngpu), 3 + max(1, segments)
    # after a switch the least is the segment before and the one running (issue 44: the running
    # one alone is empty right after a switch, and the before was off screen below 200 columns);
    # `h` asked for the history: its rows first (the header still says before and since)
    seg_least = SEGMENTS_MIN + (1 if segments > 1 and not history_first else 0)
    show = {"hist": True, "seg": True, "ev": not history_first}
    parts_min = 0 if history_first else PARTITIONS_MIN
    # the panels never take more than TOP_SHARE of the height: past it they scroll (the
    # overview names the GPUs off screen) and the rest of the dashboard keeps its room
    cap = max(PANEL_MIN, int(height * TOP_SHARE))
    gpus_least = min(rows * PANEL_MIN, cap)

    def least() -> int:
        hist = HISTORY_MIN if show["hist"] else 0
        top = max(gpus_least, hist) if wide else gpus_least + hist
        ev = EVENTS_MIN if show["ev"] and not wide else 0
        return top + (seg_least if show["seg"] else 0) + parts_min + ev

    for name in ("seg", "ev") if history_first else ("hist", "seg", "ev"):  # the least needed go first while the least does not fit
        if least() <= height:
            break
        show[name] = False
    spare = height - least()
    # the panels' box: when even their least does not fit, it takes what is left and scrolls
    gpus_h = gpus_least if spare >= 0 else max(PANEL_MIN, gpus_least + spare)
    spare = max(0, spare)

    def grow(have: int, want: int) -> int:
        nonlocal spare
        add = max(0, min(spare, want - have))
        spare -= add
        return have + add

    history_h = HISTORY_MIN if show["hist"] else 0
    if wide:  # one band: the panels and, beside them, the history
        # the history folds to fewer rows per GPU: it never makes the band taller than HISTORY_BAND
        want = max(min(rows * full, cap), min(hist_want, HISTORY_BAND, cap) if show["hist"] else 0)
        band = grow(max(gpus_h, history_h), want)
        gpus_h, history_h = band, (band if show["hist"] else 0)
    segments_h = seg_least if show["seg"] else 0
    if history_first:  # asked for: the history before the panels grow
        history_h = grow(history_h, hist_want)
    if not wide:  # stacked: the panels, then every segment (what each switch did), then the history
        gpus_h = grow(gpus_h, min(rows * full, cap))
        segments_h = grow(segments_h, seg_want) if show["seg"] else 0
        if show["hist"]:
            history_h = grow(history_h, min(hist_want, HISTORY_BAND))
    panel_h = max(PANEL_MIN, min(full, gpus_h // rows))
    if not wide and rows * panel_h < gpus_h:  # rows the panels cannot use go to the partitions
        spare += gpus_h - rows * panel_h
        gpus_h = rows * panel_h
    segments_h = grow(segments_h, seg_want) if show["seg"] else 0
    events_h = grow(EVENTS_MIN, EVENTS_WANT) if show["ev"] and not wide else 0
    side_h = parts_min + spare
    if history_first:  # what the partitions would have had goes to the history
        history_h, side_h = history_h + side_h, 0
    if wide and show["ev"]:
        events_h = side_h
    return Plan(wide=wide, gpu_cols=cols, panel_h=panel_h, gpus_h=gpus_h, history_h=history_h,
                history_w=history_w, segments_h=segments_h, side_h=side_h, events_h=events_h)
