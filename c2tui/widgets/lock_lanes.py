"""Lock lanes of one GPU: for every lock the disciplines declare (mem, compute, ...), who
holds it (worker, partition, for how long) and who waits for it (and for how long). Times
come from the snapshot's t only."""
from __future__ import annotations

from prover import lock_order

from c2tui.widgets.common import Line, fit, fmt_secs, worker_index


def lock_names(g) -> list[str]:
    """The GPU's locks in the global order (read now: the registry is the one source), then
    any a recording has that no discipline declares now."""
    order = lock_order()
    return [n for n in order if n in g.locks] + sorted(n for n in g.locks if n not in order)


RECENT_SYNC_S = 5.0  # an ended device sync stays on the mem lane this long (a 40 ms wait is gone in one frame)


def sync_cause(g, now: float, pal) -> list[Line]:
    """Why the mem holder waits, when it is the seed's cause: "device sync behind g0w0 s3p1
    41 ms" (now), or the last one, dimmer, for a few seconds after it ended. Longest first,
    then shorter forms: a narrow lane takes the longest that fits whole, never a cut word."""
    cur = getattr(g, "device_sync", None)
    if cur is not None:
        ms, style = f"{cur.waited(now) * 1000:.0f} ms", "bold reverse " + pal["device_sync"]
        return [Line(f"device sync behind {cur.behind} {ms}", style=style),
                Line(f"sync behind {cur.behind} {ms}", style=style), Line(f"sync {ms}", style=style)]
    last = getattr(g, "last_device_sync", None)
    if last is not None and last.duration is not None and now - (last.t0 + last.duration) <= RECENT_SYNC_S:
        ms, style = f"{last.duration * 1000:.0f} ms", pal["device_sync"]
        return [Line(f"last device sync {last.worker} behind {last.behind} {ms}", style=style),
                Line(f"last sync behind {last.behind} {ms}", style=style), Line(f"last sync {ms}", style=style)]
    return []


def head(name: str, lk, now: float, pal) -> Line:
    """The lock's name and who holds it, since when (or free)."""
    line = Line()
    line.append(f"{name:<8}", style="bold")
    if lk.holder is None:
        return line.append("○ ", style=pal["dim"]).append("free", style=pal["dim"]).append(" " * 12)
    held = now - lk.since
    line.append("● ", style=pal[f"wait:{name}"] if held > 5 else pal["ok"])
    line.append(lk.holder, style="bold " + pal.worker(worker_index(lk.holder)))
    if lk.holder_part:
        line.append(f" {lk.holder_part}")
    line.append(" held ", style=pal["dim"])
    return line.append(f"{fmt_secs(held):>6}", style="bold")


def waiters(name: str, lk, now: float, pal, room: int) -> Line:
    """ "waiting g0w1 s0p1 3.00s, g0w2 ..." longest waiting first, as many as fit in `room`
    whole (without their partitions if need be), the rest counted ("+2"); "3 waiting" where
    not even one fits."""
    style = pal[f"wait:{name}"]
    order = sorted(lk.waiters.items(), key=lambda kv: kv[1][1])
    for with_part in (True, False):
        items = [Line.assemble((w, pal.worker(worker_index(w))), (f" {part}" if part and with_part else "", pal["dim"]),
                               (f" {fmt_secs(now - since)}", ("bold " if now - since >= 1.0 else "") + style))
                 for w, (part, since) in order]
        for shown in range(len(items), 0, -1):
            line = Line("waiting ", style=style)
            for i, it in enumerate(items[:shown]):
                line.append(", " if i else "", pal["dim"]).append_text(it)
            if shown < len(items):
                line.append(f" +{len(items) - shown}", style=style)
            if line.cell_len <= room:
                return line
    return Line(f"{len(order)} waiting", style=style)


def lock_line(name: str, lk, now: float, pal, width: int, cause: list[Line] | None = None) -> Line:
    """One lane: holder, the device-sync cause (mem), waiters, the mean wait; each part whole
    or not at all, in that order of need."""
    line = head(name, lk, now, pal)
    fit(line, cause or [], width, gap_style="")  # no reverse video before the cause
    if lk.waiters:
        fit(line, [waiters(name, lk, now, pal, width - line.cell_len - 2)], width)
    else:
        fit(line, [Line("no waiters", style=pal["dim"])], width)
    if lk.acquisitions:
        fit(line, [Line(f"avg wait {fmt_secs(lk.wait_total / lk.acquisitions)}", style=pal["dim"])], width)
    return line.truncate(width, overflow="ellipsis")  # only a lane narrower than its head


def render_locks(g, now: float, pal, width: int) -> list[Line]:
    return [lock_line(n, g.locks[n], now, pal, width, sync_cause(g, now, pal) if n == "mem" else None)
            for n in lock_names(g)]
