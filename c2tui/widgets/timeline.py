"""The timeline of one GPU: the last N seconds, one lane per worker, each cell coloured by
what the worker did then (a GPU phase, or waiting for a lock: `mem`, `compute`, ...), so overlap of
pre-stage with kernels - or its absence - shows at a glance."""
from __future__ import annotations

import math


from c2tui.widgets.common import Line, worker_index

LABEL_W = 6
WAIT_CHAR = "▒"
PHASE_CHAR = "█"
IDLE_CHAR = "·"
# short GPU phases (prestage: 18 ms) must still show; waits must not hide work
# and a device sync under mem (tens of ms: the seed's cause) must show above everything
_PRIO = {"device_sync": 4, "r1cs": 3, "prestage": 3, "ntt_h": 2, "msm": 2}  # any wait:<lock> ranks 1
SYNC_CHAR = "▚"


def _prio(label: str) -> int:
    return _PRIO.get(label, 1 if label.startswith("wait:") else 0)


def lane_workers(g) -> list[str]:
    names = set(g.workers)
    for seg in list(g.timeline)[-64:]:
        names.add(seg.worker)
    return sorted(names, key=lambda w: (worker_index(w), w))


def sync_tags(segs, now: float) -> dict[str, str]:
    """Workers in a device-global sync now -> " device sync behind g0w0 s3p1 41 ms▚"."""
    tags: dict[str, str] = {}
    for seg, _ in segs:
        if seg.label == "device_sync" and seg.t1 is None:
            behind = seg.detail or ""
            tags[seg.worker] = f" device sync {behind} {(now - seg.t0) * 1000:.0f} ms{SYNC_CHAR}"
    return tags


def render_timeline(g, now: float, pal, width: int, window: float = 30.0,
                    workers: list[str] | None = None) -> list[Line]:
    workers = workers if workers is not None else lane_workers(g)
    cols = max(4, width - LABEL_W - 1)
    dt = window / cols
    # columns on a fixed grid of run time (the last one holds `now`): lanes shift one whole
    # cell at a time instead of shimmering, and most frames leave them unchanged
    t0 = (math.floor(now / dt) + 1) * dt - window
    lanes: dict[str, list[str | None]] = {w: [None] * cols for w in workers}
    # newest -> oldest; a worker's segments are sequential, so its first segment starting
    # before the window is its last one that can reach into it
    done: set[str] = set()
    segs = []
    for seg in reversed(g.timeline):
        if seg.worker in done:
            if len(done) >= len(lanes):
                break
            continue
        end = seg.t1 if seg.t1 is not None else now
        if seg.t0 < t0:
            done.add(seg.worker)
            if end <= t0:
                if len(done) >= len(lanes):
                    break
                continue
        segs.append((seg, end))
    for seg, end in reversed(segs):
        lane = lanes.get(seg.worker)
        if lane is None:
            continue
        a = max(0, int((seg.t0 - t0) / dt))
        # an open segment is what the worker does now: it reaches the last column
        b = cols if seg.t1 is None else min(cols, max(a + 1, math.ceil((end - t0) / dt)))
        pr = _prio(seg.label)
        for c in range(a, b):
            cur = lane[c]
            if cur is None or _prio(cur) <= pr:
                lane[c] = seg.label
    out: list[Line] = []
    tags = sync_tags(segs, now)
    for w in workers:
        line = Line(no_wrap=True, overflow="crop")
        line.append(f"{w[-LABEL_W:]:<{LABEL_W}}", style="bold " + pal.worker(worker_index(w)))
        line.append("│", style=pal["dim"])
        run_label, run_len = None, 0
        for lab in lanes[w] + ["<end>"]:
            if lab == run_label:
                run_len += 1
                continue
            if run_len:
                if run_label is None:
                    line.append(IDLE_CHAR * run_len, style=pal["idle"])
                elif run_label == "device_sync":
                    line.append(SYNC_CHAR * run_len, style=pal[run_label])
                elif run_label.startswith("wait:"):
                    line.append(WAIT_CHAR * run_len, style=pal[run_label])
                else:
                    line.append(PHASE_CHAR * run_len, style=pal[run_label])
            run_label, run_len = lab, 1
        if w in tags:  # in a device sync now: say behind whom, ending at "now"
            tag = tags[w]
            keep = max(0, line.cell_len - len(tag))
            line = line.truncate(keep).append(tag, "bold reverse " + pal["device_sync"])
        out.append(line)
    out.append(axis_line(cols, dt, window, pal))
    return out


def axis_line(cols: int, dt: float, window: float, pal) -> Line:
    """The time axis: a tick every 5 s (10 s for long windows), "now" at the right."""
    axis = [" "] * cols
    step = 5.0 if window <= 60 else 10.0
    k = 1
    while k * step < window:
        c = cols - 1 - int(k * step / dt)
        txt = f"-{int(k * step)}s"
        if 0 <= c and c + len(txt) < cols - 4:
            axis[c] = "╵"
            for j, ch in enumerate(txt):
                if c + 1 + j < cols:
                    axis[c + 1 + j] = ch
        k += 1
    for j, ch in enumerate("now"):
        axis[cols - 3 + j] = ch
    return Line(" " * LABEL_W + " " + "".join(axis), style=pal["dim"], no_wrap=True)
