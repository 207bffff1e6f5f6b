"""The host-RAM bar (beside the GPUs' VRAM bars; host memory is the host's, not a GPU's):
the proving keys by size (hot █, loading ░; largest first), each worker's buffers (witness,
a/b/c, prep) in its colour, free and the budget mark, the workers the budget holds back and
for how long; a second line names the keys by size and state, a load's progress and who
waits for a key. Modelled figures say so. Hidden while the run has said nothing about host
memory (older recordings)."""
from __future__ import annotations

from c2tui.widgets.common import Line, StateView, fmt_secs, gib, worker_index
from c2tui.widgets.alerts import MARK, STYLE, set_level
from prover import budget_of, is_key, screen
from prover import DashboardState

CHAR = {"witness": "▒", "abc": "█", "prep": "▓"}
KEY_STYLES = ("info", "assemble", "verify", "prep_msm")  # a key size each, largest first


def key_style(pal, i: int) -> str:
    return pal[KEY_STYLES[i % len(KEY_STYLES)]]


def host_parts(h, pal, loading: frozenset[str] = frozenset()) -> list[tuple[int, str, str]]:
    """(bytes, char, style) left to right: the keys by size (largest first; ░ while one
    loads), then each worker's buffers."""
    parts = [(n, "░" if owner in loading else "█", key_style(pal, i)) for i, (owner, n) in enumerate(h.keys().items())]
    for owner in sorted((o for o in h.owners if not is_key(o)), key=lambda o: (worker_index(o), o)):
        for name, n in sorted(h.owners[owner].items()):
            parts.append((n, CHAR.get(name, "█"), pal.worker(worker_index(owner), alt=name == "abc")))
    return parts


def _bar(h, budget: int, pal, bar_w: int, loading: frozenset[str] = frozenset()) -> Line:
    used = h.used
    cap = float(max(budget * 1.08 if budget else 0, used, h.total if not budget else 0, 1))
    bar, acc, col = Line(no_wrap=True), 0, 0
    for n, ch, style in host_parts(h, pal, loading):
        acc += n
        end = min(bar_w, round(acc / cap * bar_w))
        if n > 0 and end <= col < bar_w:
            end = col + 1
        if end > col:
            bar.append(ch * (end - col), style=style)
            col = end
    mark = min(bar_w - 1, max(0, round(budget / cap * bar_w) - 1)) if budget else -1
    if col <= mark:
        bar.append(" " * (mark - col), style=f"on {pal['free']}")
        bar.append("┃", style=f"bold {pal['budget']} on {pal['free']}")
        bar.append("·" * (bar_w - mark - 1), style=pal["dim"])
    elif col < bar_w:
        bar.append(" " * (bar_w - col), style=f"on {pal['free']}")
    return bar


def render_host_ram(st: DashboardState, pal, width: int) -> list[Line]:
    h = st.host_ram
    budget = budget_of(st.knobs)
    label = "host RAM "
    suffix = f" {gib(h.used)}/{gib(budget)} GiB" if budget else f" {gib(h.used)} GiB (no budget)"
    bar = Line(no_wrap=True)
    bar.append(label, style="bold")
    loading = frozenset(f"key 2^{k.log2}" for k in st.keys.loading)
    bar.append_text(_bar(h, budget, pal, max(10, width - len(label) - len(suffix)), loading))
    bar.append(suffix, style="bold " + (pal["fail"] if budget and h.used > budget else ""))
    leg = Line(no_wrap=True, overflow="ellipsis")
    leg.append(" " * len(label))
    _key_legend(st, leg, pal)
    leg.append(f"{h.workers_held()} workers ", style="bold")
    leg.append(f"{gib(h.by_kind()['workers'])} GiB  ")
    if h.pinned_bytes:
        leg.append(f"pinned {gib(h.pinned_bytes)}  ", style=pal["dim"])
    if h.waiters:
        oldest = min(since for since, _ in h.waiters.values())
        leg.append(f"held back {len(h.waiters)} ({', '.join(sorted(h.waiters))}) {fmt_secs(st.t - oldest)}  ",
                   style="bold " + pal["warn"])
    leg.append(f"waits {h.waits}", style=pal["dim"])
    leg.append(f"  {'modelled' if h.modelled else 'native'} 2^{h.log2}", style=pal["sim" if h.modelled else "info"])
    leg.truncate(width, overflow="ellipsis")
    return [bar, leg]


def _key_legend(st: DashboardState, leg: Line, pal) -> None:
    """Each key size: hot (its bytes), loading (its progress) or cold; then who waits for one.
    Recordings from before the key ring: the one key's bytes."""
    h, ks = st.host_ram, st.keys
    if not ks.keys:
        leg.append("█", style=pal["info"])
        leg.append(f"key {gib(h.by_kind()['key'])} GiB  ")
        return
    for i, (log2, k) in enumerate(sorted(ks.keys.items(), reverse=True)):
        leg.append("░" if k.state == "loading" else "█", style=key_style(pal, i) if k.state != "cold" else pal["dim"])
        gpu = f" + {gib(k.device_bytes)} GiB on the GPU" if k.device_bytes else ""  # a resident key's queries
        what = {"hot": f"{gib(k.bytes)} GiB{gpu}", "loading": f"loading {k.frac:.0%}", "cold": "cold"}[k.state]
        leg.append(f"2^{log2} {what}  ", style="" if k.state != "loading" else "bold " + pal["warn"])
    if h.circuits():  # held under the keys' owners (the bar's key colours), said apart
        leg.append(f"circuits {gib(h.circuits())} GiB  ")
    if ks.waiters:
        oldest = min(since for _, since, _ in ks.waiters.values())
        leg.append(f"key wait {len(ks.waiters)} ({', '.join(sorted(ks.waiters))}) {fmt_secs(st.t - oldest)}  ",
                   style="bold " + pal["warn"])


class HostRamBar(StateView):
    DEFAULT_CSS = "HostRamBar { height: 2; padding: 0 1; }"

    def wanted_height(self, st: DashboardState) -> int:
        shown = bool(st.host_ram.owners or st.host_ram.total)
        self.display = shown
        return 2 if shown else 0

    def show(self, st: DashboardState) -> None:
        set_level(self, screen.host_verdict(st).level)  # host-RAM waits, near its budget: amber / red
        super().show(st)

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        lines = render_host_ram(st, self.palette, width)
        v = screen.host_verdict(st)
        if v.level != "ok" and len(lines) > 1:  # why, at the legend's start (its cells are blank there)
            lines[1] = Line(f"{MARK[v.level]} {v.reason}  ", style="bold " + self.palette[STYLE[v.level]]) \
                .append_text(lines[1]).truncate(width, overflow="ellipsis")
        return lines
