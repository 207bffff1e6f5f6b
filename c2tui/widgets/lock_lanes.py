"""Lock lanes of one GPU: for every lock the disciplines declare (mem, compute, ...), who
holds it (worker, partition, for how long) and who waits for it (and for how long). Times
come from the snapshot's t only."""
from __future__ import annotations

from prover import lock_order

from c2tui.widgets.common import Line, fmt_secs, worker_index


def lock_names(g) -> list[str]:
    """The GPU's locks in the global order (read now: the registry is the one source), then
    any a recording has that no discipline declares now."""
    order = lock_order()
    return [n for n in order if n in g.locks] + sorted(n for n in g.locks if n not in order)


RECENT_SYNC_S = 5.0  # an ended device sync stays on the mem lane this long (a 40 ms wait is gone in one frame)


def sync_cause(g, now: float, pal) -> Line | None:
    """Why the mem holder waits, when it is the seed's cause: "device sync behind g0w0 s3p1
    41 ms" (now), or the last one, dimmer, for a few seconds after it ended."""
    cur = getattr(g, "device_sync", None)
    if cur is not None:
        return Line(f"device sync behind {cur.behind} {cur.waited(now) * 1000:.0f} ms",
                    style="bold reverse " + pal["device_sync"])
    last = getattr(g, "last_device_sync", None)
    if last is not None and last.duration is not None and now - (last.t0 + last.duration) <= RECENT_SYNC_S:
        return Line(f"last device sync {last.worker} behind {last.behind} {last.duration * 1000:.0f} ms",
                    style=pal["device_sync"])
    return None


def lock_line(name: str, lk, now: float, pal, width: int, cause: Line | None = None) -> Line:
    line = Line(no_wrap=True, overflow="ellipsis")
    line.append(f"{name:<8}", style="bold")
    if lk.holder is not None:
        held = now - lk.since
        line.append("● ", style=pal[f"wait:{name}"] if held > 5 else pal["ok"])
        line.append(lk.holder, style="bold " + pal.worker(worker_index(lk.holder)))
        if lk.holder_part:
            line.append(f" {lk.holder_part}")
        line.append(" held ", style=pal["dim"])
        line.append(f"{fmt_secs(held):>6}", style="bold")
        if cause is not None:
            line.append("  ").append_text(cause)
            cause = None
    else:
        line.append("○ ", style=pal["dim"])
        line.append("free", style=pal["dim"])
        line.append(" " * 12)
    if cause is not None:  # a finished sync, the lock free now
        line.append("  ").append_text(cause)
    if lk.waiters:
        line.append("  waiting ", style=pal[f"wait:{name}"])
        waits = sorted(lk.waiters.items(), key=lambda kv: kv[1][1])
        for i, (w, (part, since)) in enumerate(waits):
            if i:
                line.append(", ", style=pal["dim"])
            waited = now - since
            line.append(w, style=pal.worker(worker_index(w)))
            if part:
                line.append(f" {part}", style=pal["dim"])
            line.append(f" {fmt_secs(waited)}", style=("bold " if waited >= 1.0 else "") + pal[f"wait:{name}"])
    else:
        line.append("  no waiters", style=pal["dim"])
    if lk.acquisitions:
        tail = Line(f"  avg wait {fmt_secs(lk.wait_total / lk.acquisitions)}", style=pal["dim"])
        if line.cell_len + tail.cell_len <= width:
            line.append_text(tail)
    line.truncate(width, overflow="ellipsis")
    return line


def render_locks(g, now: float, pal, width: int) -> list[Line]:
    return [lock_line(n, g.locks[n], now, pal, width, sync_cause(g, now, pal) if n == "mem" else None)
            for n in lock_names(g)]
