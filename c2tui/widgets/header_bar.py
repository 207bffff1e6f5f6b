"""The header: what runs (backend, profile, SIMULATED), how (lock mode, mem_sync, knobs) and
how well (throughput, proofs ok / failed, fallbacks, OOMs, elapsed run time)."""
from __future__ import annotations

from c2tui.widgets.alerts import alert_items, oom_line, set_level
from c2tui.widgets.common import PAUSE, Line, StateView, flow, fmt_clock, truthy
from c2tui.widgets.rate_text import rate_items, short_change  # noqa: F401 - short_change: re-exported
from c2tui.widgets.rate_text import stand_ins as rate_stand_ins
from prover import screen
from prover import DashboardState


def size_label(st: DashboardState) -> str:
    """What was proved beside what is modelled: "proved 2^10 · modelled 2^27 (rtx5070ti-16g)",
    or "native 2^22" when nothing is modelled."""
    if st.profile == "native":
        extra = "" if st.modelled_log2 in (0, st.proved_log2) else f" · buffers 2^{st.modelled_log2}"
        return f"native 2^{st.proved_log2}{extra}"
    if not st.modelled_log2:
        return st.profile
    return f"proved 2^{st.proved_log2} · modelled 2^{st.modelled_log2} ({st.profile})"


def header_items(st: DashboardState, pal, source_label: str = "", theme: str = "", compact: bool = False,
                 stand_ins: bool = False) -> list[Line]:
    """The header's items in order; `stand_ins`: then the widest "before" and "since" where no
    switch has brought them yet (rate_text.stand_ins: the height keeps their room)."""
    k = st.knobs
    items: list[Line] = []
    ident = Line()
    ident.append(" c2tui ", style=f"bold reverse {pal['info']}")
    ident.append(f" {st.backend}", style="bold")
    ident.append(f" {size_label(st)}", style=pal["dim"])
    items.append(ident)
    items += alert_items(st, pal, compact)  # the worst alert threshold met now, and why (prover.screen)
    if st.simulated:
        items.append(Line(" SIMULATED ", style=f"bold reverse {pal['sim']}"))
    if truthy(str(st.config.get("insecure_seeded_setup", False))):  # keys anyone knowing the seed can forge for
        items.append(Line(" INSECURE SEEDED SETUP ", style=f"bold reverse {pal['fail']}"))
    if truthy(str(st.config.get("insecure_seeded_proofs", False))):  # proofs that reveal their witness
        items.append(Line(" INSECURE SEEDED PROOFS ", style=f"bold reverse {pal['fail']}"))
    if source_label:
        items.append(Line(source_label, style=f"bold {pal['info']}"))
    if st.hosts:  # a fleet: hosts up, and lost ones loudly
        up, lost = sum(h.alive for h in st.hosts.values()), sum(h.lost for h in st.hosts.values())
        items.append(Line.assemble(("fleet ", pal["dim"]), (f"{up} hosts", "bold"), (f" · {len(st.gpus)} GPUs", pal["dim"]),
                                   *(((f" · {lost} lost", "bold " + pal["fail"]),) if lost else ())))
    lm = k.get("lock_mode", "?")
    items.append(Line.assemble(("lock ", pal["dim"]), (lm, "bold " + (pal["warn"] if lm == "single" else pal["ok"]))))
    ms = k.get("mem_sync", "?")
    items.append(Line.assemble(("mem_sync ", pal["dim"]), (ms, "bold " + (pal["fail"] if ms == "device" else pal["ok"]))))
    items.append(Line.assemble(("workers " if compact else "workers/gpu ", pal["dim"]), (k.get("workers_per_gpu", "?"), "bold")))
    if "prestage" in k:
        on = truthy(k["prestage"])
        items.append(Line.assemble(("prestage ", pal["dim"]), ("on" if on else "off", "bold" if on else "bold " + pal["warn"])))
    if "b_g2" in k:
        items.append(Line.assemble(("b_g2 ", pal["dim"]), (k["b_g2"], "bold")))
    if truthy(k.get("paused", "false")):
        items.append(Line(f" {PAUSE} PAUSED ", style=f"bold reverse {pal['warn']}"))
    # --- figures -------------------------------------------------------------------------
    items += rate_items(st, pal, compact)
    proofs = Line.assemble(("proofs ", pal["dim"]), (f"✓{st.proofs_ok}", "bold " + pal["ok"]), " ",
                           (f"✗{st.proofs_failed}", ("bold reverse " if st.proofs_failed else "") + pal["fail"]))
    if st.proofs_unchecked:  # made but never verified: neither ok nor failed
        proofs.append(f" ?{st.proofs_unchecked} unchecked", style="bold " + pal["warn"])
    items.append(proofs)
    inflight = sum(1 for p in st.partitions.values() if p.done_t is None and p.phases)
    items.append(Line.assemble(("done ", pal["dim"]), (str(st.partitions_done), "bold"),
                               (f" · {inflight} in flight" + (" (all GPUs)" if len(st.gpus) > 1 else ""), pal["dim"])))
    items.append(Line.assemble(("fallbacks ", pal["dim"]), (str(st.fallbacks), "bold " + (pal["warn"] if st.fallbacks else ""))))
    items.append(oom_line(st, pal, compact=compact))  # retried and failed apart
    if st.stalls:
        items.append(Line.assemble(("stalls ", pal["dim"]), (str(st.stalls), "bold " + pal["warn"])))
    if st.ended:
        items.append(Line(f" ENDED: {st.end_reason} ", style=f"bold reverse {pal['dim']}"))
    items.append(Line.assemble(("t ", pal["dim"]), (fmt_clock(st.t), "bold")))
    if theme:
        items.append(Line.assemble(("theme ", pal["dim"]), (theme, "bold")))
    return items + (rate_stand_ins(st, compact) if stand_ins else [])


class HeaderBar(StateView):
    DEFAULT_CSS = "HeaderBar { height: 1; }"

    source_label: str = ""
    _kept: tuple[int, int] = (0, 0)  # (width, lines): never fewer lines at one width

    def _items(self, st: DashboardState, stand_ins: bool = False) -> list[Line]:
        # the theme's name costs a line at 80 columns; `t` and the help name it there
        wide = self.app.size.width >= 120
        theme = getattr(self.app, "theme_name", "") if wide else ""
        return header_items(st, self.palette, self.source_label, theme, compact=not wide, stand_ins=stand_ins)

    def wanted_height(self, state: DashboardState) -> int:
        """Fixed for a width: the lines the items take with room kept for those that come and
        go (rate_text.stand_ins), and never fewer than it has taken at this width."""
        # before the first layout: the screen's width less this bar's padding (0 1), not the
        # bordered panels' 4, or the first frame wraps one item too early
        width = self.content_size.width or max(20, self.app.size.width - 2)
        n = len(flow(self._items(state, stand_ins=True), width))
        kept_w, kept_n = self._kept
        self._kept = (width, max(n, kept_n) if kept_w == width else n)
        return self._kept[1]

    def show(self, st: DashboardState) -> None:
        set_level(self, screen.run_verdict(st).level)  # the bar's colour: the worst threshold met
        super().show(st)

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        return flow(self._items(st), width)
