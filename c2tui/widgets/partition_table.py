"""The partition table: in-flight partitions first, then the most recently finished, one
row each: id, GPU, worker, phase bar, current phase and its elapsed time, total time,
pre-staged or fallback, verified or failed. Static-based (one Line) so a frame is cheap."""
from __future__ import annotations


from c2tui.widgets.common import Line, PHASE_SHORT, StateView, fmt_secs, worker_index
from c2tui.widgets.phase_bar import render_phase_bar


def lock_status(st, p) -> tuple[str, str, float] | None:
    """('wait' | 'hold', lock name, since) for a partition between phases, if any."""
    for g in st.gpus.values():
        for name, lk in g.locks.items():
            w = lk.waiters.get(p.worker or "")
            if w is not None and w[0] == p.part:
                return "wait", name, w[1]
    for g in st.gpus.values():
        for name, lk in g.locks.items():
            if lk.holder_part == p.part:
                return "hold", name, lk.since
    return None


def lock_gpu(st, p) -> int | None:
    for i, g in st.gpus.items():
        for lk in g.locks.values():
            if lk.holder_part == p.part or any(w[0] == p.part for w in lk.waiters.values()):
                return i
    return None


def _cols(width: int) -> tuple[int, bool, bool]:
    """(phase bar width, show 'now' column, show total time column)."""
    fixed = 7 + 4 + 7 + 10 + 7  # part, gpu, worker, stage, proof
    now_w, tot_w = 14, 8
    show_now = width - fixed - now_w >= 24
    show_tot = width - fixed - now_w - tot_w >= 32
    bar = width - fixed - (now_w if show_now else 0) - (tot_w if show_tot else 0) - 2
    return max(8, bar), show_now, show_tot


def render_rows(st, pal, width: int, height: int) -> list[Line]:
    bar_w, show_now, show_tot = _cols(width)
    head = Line(no_wrap=True, style="bold " + pal["dim"])
    head.append(f"{'part':<7}{'gpu':<4}{'worker':<7}")
    labels = " ".join(PHASE_SHORT[p][:3] for p in PHASE_SHORT)
    head.append(f"{'phases':<{bar_w}}"[:bar_w] if bar_w < len(labels) + 2 else f"{labels:<{bar_w}}")
    head.append("  ")
    if show_now:
        head.append(f"{'current':<14}")
    if show_tot:
        head.append(f"{'total':>7} ")
    head.append(f"{'stage':<10}{'proof':<7}")
    rows = [head]
    inflight = [p for p in st.partitions.values() if p.done_t is None and p.phases]
    done = sorted((p for p in st.partitions.values() if p.done_t is not None),
                  key=lambda p: p.done_t or 0.0, reverse=True)
    queued = [p for p in st.partitions.values() if p.done_t is None and not p.phases]
    room = max(0, height - 1 - (1 if queued else 0))
    parts = (inflight + done)[:room]
    for p in parts:
        r = Line(no_wrap=True, overflow="ellipsis")
        failed = p.ok is False or p.verified is False
        r.append(f"{p.part:<7}", style="bold " + (pal["fail"] if failed else ""))
        gpu = p.gpu if p.gpu is not None else lock_gpu(st, p)
        r.append(f"{'' if gpu is None else gpu!s:<4}")
        w = p.worker or ""
        r.append(f"{w[-6:]:<7}", style=pal.worker(worker_index(w)) if w else "")
        r.append_text(render_phase_bar(p, st.t, pal, bar_w, st.phase_stats))
        r.append("  ")
        if show_now:
            if p.current:
                t0 = p.phases.get(p.current, [st.t])[0] or st.t
                r.append(f"{PHASE_SHORT.get(p.current, p.current):<6}", style="bold " + pal[p.current])
                r.append(f"{fmt_secs(st.t - t0):>7} ")
            elif p.done_t is not None:
                r.append(f"{'done' if p.ok else 'FAILED':<14}", style=pal["ok"] if p.ok else "bold " + pal["fail"])
            elif not p.phases:
                r.append(f"{'queued':<14}", style=pal["dim"])
            else:
                lk = lock_status(st, p)
                if lk is not None:
                    what, name, since = lk
                    style = pal[f"wait:{name}"] if what == "wait" else pal["dim"]
                    r.append(f"{what} {name[:3]:<3}", style=style)          # 8 cells, like a phase's 6 + 2
                    # a space before the time keeps "wait com 4.73s" apart (14 cells in all)
                    r.append(f" {fmt_secs(st.t - since):>5}", style=style if what == "wait" else "")
                else:
                    r.append(f"{'cpu/queue':<14}", style=pal["dim"])
        if show_tot:
            start = min((s[0] for s in p.phases.values() if s[0] is not None), default=None)
            end = p.done_t if p.done_t is not None else st.t
            r.append(f"{fmt_secs(end - start) if start is not None else '':>7} ")
        if p.fallback:
            r.append(f"{'fallback':<10}", style="bold " + pal["warn"])
        elif p.prestaged:
            r.append(f"{'prestaged':<10}", style=pal["ok"])
        else:
            r.append(f"{'–':<10}", style=pal["dim"])
        if p.verified is True:
            r.append("✓ ok", style="bold " + pal["ok"])
        elif p.verified is False:
            r.append("✗ FAIL", style="bold reverse " + pal["fail"])
        elif p.ok is False:
            r.append("✗ err", style="bold " + pal["fail"])
        else:
            r.append("…", style=pal["dim"])
        r.truncate(width, overflow="ellipsis")
        rows.append(r)
    if queued and len(rows) < height:
        q = Line(no_wrap=True, overflow="ellipsis", style=pal["dim"])
        q.append(f"+{len(queued)} queued: ")
        q.append(" ".join(p.part for p in queued[:40]))
        q.truncate(width, overflow="ellipsis")
        rows.append(q)
    if not inflight and not done and not queued:
        rows.append(Line("no partitions yet", style=pal["dim"]))
    return rows


class PartitionTable(StateView):
    DEFAULT_CSS = "PartitionTable { height: 1fr; }"

    def show(self, st) -> None:
        inflight = sum(1 for p in st.partitions.values() if p.done_t is None and p.phases)
        queued = sum(1 for p in st.partitions.values() if not p.phases)
        sub = f"{inflight} in flight · {queued} queued · {st.partitions_ok} ok · {st.partitions_failed} failed"
        self.set_titles("Partitions", sub)
        super().show(st)

    def draw(self, st, width: int, height: int) -> list[Line]:
        return render_rows(st, self.palette, width, height)
