"""The VRAM bar of one GPU: live buffers split by owner (each worker's d_a / d_bc in its own
two shades, its z and classes where the GPU makes a, b, c), the circuits' resident matrices
first (owner r1cs:2^N, one part, in their own colour), pool-cached-but-unused (pool_reserved -
pool_used), free, and the budget mark; with NVML's device figures where the device is real."""
from __future__ import annotations


from c2tui.widgets.common import Line, fit, fmt_bytes, gib, worker_index

BUF_CHAR = {"d_a": "█", "d_bc": "▓", "z": "▒", "z_cls": "▒"}
RESIDENT, RESIDENT_CHAR = "r1cs:", "▞"  # a circuit's matrices on the GPU (abc gpu): held all run


def _owners(g) -> list[str]:
    """Resident owners first (they stay), then the workers by their number."""
    return sorted(g.live, key=lambda o: (not o.startswith(RESIDENT), worker_index(o), o))


def _scale(g) -> float:
    live = g.live_bytes
    budget = g.budget or g.total or max(live, g.pool_reserved, 1)
    cap = max(budget, g.pool_reserved, live, 1)
    if g.total and g.total > budget:
        cap = max(cap, budget * 1.08)  # leave room to show the budget mark inside the bar
    return float(cap)


def vram_parts(g, pal) -> list[tuple[int, str, str, str]]:
    """(bytes, char, style, label) left to right."""
    parts: list[tuple[int, str, str, str]] = []
    for owner in _owners(g):
        if owner.startswith(RESIDENT):
            parts.append((sum(g.live[owner].values()), RESIDENT_CHAR, pal["r1cs"], owner))
            continue
        wi = worker_index(owner)
        for k, (name, b) in enumerate(sorted(g.live[owner].items())):
            alt = name != "d_a" and (name == "d_bc" or k % 2 == 1)
            parts.append((b, BUF_CHAR.get(name, "█"), pal.worker(wi, alt=alt), f"{owner} {name}"))
    live = g.live_bytes
    cached = max(0, max(g.pool_reserved, live) - max(g.pool_used, live))
    if cached:
        parts.append((cached, "░", pal["pool"], "pool-cached"))
    return parts


def render_vram(g, pal, width: int) -> list[Line]:
    label = "VRAM "
    live = g.live_bytes
    used = max(g.pool_reserved, live)
    budget = g.budget or g.total
    # "pool": what the pool holds from the device (live + pool-cached): one meaning wherever it is
    # shown (History's "VRAM live" row, status's "pool GiB", metrics' vram_pool_reserved_bytes)
    suffix = f" pool {gib(used)}/{gib(budget)} GiB" if budget else f" pool {gib(used)} GiB"
    bar_w = max(10, width - len(label) - len(suffix))
    cap = _scale(g)
    bar = Line(no_wrap=True)
    bar.append(label, style="bold")
    acc, col = 0, 0
    for b, ch, style, _ in vram_parts(g, pal):
        acc += b
        end = min(bar_w, round(acc / cap * bar_w))
        if b > 0 and end <= col and col < bar_w:
            end = col + 1  # never let a live buffer vanish below one cell
        if end > col:
            bar.append(ch * (end - col), style=style)
            col = end
    mark = min(bar_w - 1, max(0, round(budget / cap * bar_w) - 1)) if budget else -1
    if col < bar_w:
        rest = bar_w - col
        if col <= mark < bar_w:
            free_cells = mark - col
            bar.append(" " * free_cells, style=f"on {pal['free']}")
            bar.append("┃", style=f"bold {pal['budget']} on {pal['free']}")
            bar.append("·" * (bar_w - mark - 1), style=pal["dim"])
        else:
            bar.append(" " * rest, style=f"on {pal['free']}")
    over = used > budget if budget else False
    bar.append(suffix, style="bold " + (pal["fail"] if over else ""))

    return [bar, legend(g, pal, width, used, budget)]


def legend(g, pal, width: int, used: int, budget: int) -> Line:
    """Each owner's buffers, pool-cached, free, the budget, NVML: each part whole or left
    out where the panel is narrow (two panels side by side), never a word cut by '…'."""
    parts: list[Line] = []
    for owner in _owners(g):
        if owner.startswith(RESIDENT):
            parts.append(Line.assemble((owner, "bold " + pal["r1cs"]), (f" {RESIDENT_CHAR}", pal["r1cs"]),
                                       f"{gib(sum(g.live[owner].values()))}  "))
            continue
        wi = worker_index(owner)
        part = Line().append(owner, style="bold " + pal.worker(wi))
        for name, b in sorted(g.live[owner].items()):
            part.append(f" {BUF_CHAR.get(name, '█')}", style=pal.worker(wi, alt=name == "d_bc"))
            part.append(f"{name} {gib(b)}")
        parts.append(part.append("  "))
    cached = max(0, used - max(g.pool_used, g.live_bytes))
    parts.append(Line.assemble(("░", pal["pool"]), f"pool-cached {gib(cached)}  "))
    parts.append(Line.assemble(("free ", pal["dim"]), (gib(max(0, budget - used) if budget else 0), "bold")))
    parts.append(Line.assemble(("  ┃", pal["budget"]), (f"budget {gib(budget)}" if budget else "no budget", pal["dim"])))
    if g.nvml and g.device_used is not None:
        parts.append(Line(f"  NVML {fmt_bytes(g.device_used)}/{fmt_bytes(g.total)}", style=pal["info"]))
    leg = Line(" " * len("VRAM "))
    for part in parts:
        fit(leg, [part], width, gap="")
    return leg.truncate(width, overflow="ellipsis")  # only a panel narrower than one owner
