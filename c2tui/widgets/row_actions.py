"""Row actions (issue 36): select a row and press a key; each asks first, naming exactly what it
will do (c2tui/widgets/confirm_action.py), and goes through the controller as the job prompt does
(recorded with source key). Three kinds of row:

- a partition row (Tab to the partitions, ↑ ↓): `c` cancel the partition, `x` cancel its sector,
  `r` requeue it, `o` cordon (or uncordon) its GPU (`row_action`);
- a sector row (`v` in the partitions turns its rows into sectors, ↑ ↓): `c` or `x` cancel the
  sector, naming its unfinished partitions; `r` and `o` say why there is none (`sector_action`);
- a GPU (Tab to its panel, or ↑ ↓ on the GPU overview's lines where the panels do not all fit):
  `o` cordon or uncordon it (`gpu_action`).

Only what exists now is offered: a finished partition or sector cannot be cancelled, a queued
partition not requeued; cordoning the last GPU that still takes work says it idles the run. The
job prompt's examples (`a`) are made from the run's own ids the same way (`prompt_forms`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from prover import DashboardState

KEYS = {"c": "cancel the selected partition, or the selected sector row", "x": "cancel its sector",
        "r": "requeue the selected partition", "o": "cordon / uncordon its GPU"}
GPU_KEYS = {"o": "cordon / uncordon the selected GPU"}


@dataclass(frozen=True)
class RowAction:
    spec: str  # the controller's form: "cancel=s3p2", "cordon=1"
    words: str  # what it will do, in full
    warn: str = ""  # said above the question (the last GPU taking work)


def can_steer(app: Any) -> bool:
    """A row action's key applies: live and not a read-only client (the footer hides it otherwise)."""
    return not getattr(app, "replay", True) and not getattr(getattr(app, "source", None), "readonly", False)


def step(rows: list, current: Any, n: int) -> Any:
    """The row `n` away from `current` (the first where none is selected), kept in range: ↑ ↓ on
    any kind of row (partitions, sectors, the GPU overview's lines)."""
    if not rows:
        return current
    i = rows.index(current) + n if current in rows else 0
    return rows[max(0, min(len(rows) - 1, i))]


def _live(p: Any) -> bool:
    return p.done_t is None


def row_action(st: DashboardState, part: str, key: str) -> RowAction | str:
    """The action `key` means on partition `part` now, or why there is none (a sentence)."""
    p = st.partitions.get(part)
    what = {"c": "cancel", "x": "cancel_sector", "r": "requeue", "o": "cordon"}.get(key)
    if p is None or what is None:
        return f"{part}: no such partition on screen now"
    on = f" on gpu{p.gpu}" if p.gpu is not None else ""
    where = f"{on} in {p.current}" if p.current else (on if p.phases else " (queued)")
    if what == "cancel":
        if not _live(p):
            return f"{part} is finished: nothing to cancel"
        return RowAction(f"cancel={part}", f"cancel partition {part}{where}: it stops at its next boundary and "
                                           "counts as cancelled, not failed")
    if what == "cancel_sector":
        return _cancel_sector(st, p.sector)
    if what == "requeue":
        if not _live(p) or not p.phases:
            return f"{part} is {'finished' if not _live(p) else 'still queued'}: nothing to requeue"
        return RowAction(f"requeue={part}", f"requeue partition {part}{where}: it stops at its next boundary and "
                                            "goes back to the front of its queue")
    if p.gpu is None:
        return f"{part} has no GPU yet: nothing to cordon"
    return gpu_action(st, p.gpu)


def _unfinished(st: DashboardState, sector: int) -> list[str]:
    return sorted((q.part for q in st.partitions.values() if q.sector == sector and _live(q)),
                  key=lambda n: st.partitions[n].index)


def _cancel_sector(st: DashboardState, sector: int) -> RowAction | str:
    left = _unfinished(st, sector) if sector >= 0 else []
    if not left:
        return f"sector s{sector} is finished: nothing left to cancel"
    return RowAction(f"cancel=s{sector}", f"cancel sector s{sector}: its {len(left)} unfinished partition(s) "
                                          f"({', '.join(left[:6])}{' …' if len(left) > 6 else ''})")


def sector_action(st: DashboardState, sector: int, key: str) -> RowAction | str:
    """The action `key` means on sector row `sector` now (`c` or `x`: cancel it), or why there
    is none: requeue and cordon act on a partition or a GPU, not on a sector."""
    if key in ("c", "x"):
        return _cancel_sector(st, sector)
    if key == "r":
        return f"s{sector} is a sector: requeue acts on a partition (v: partition rows)"
    if key == "o":
        return f"s{sector} is a sector: cordon acts on a GPU (v: partition rows, or tab to a GPU panel)"
    return f"s{sector}: no such sector action"


def gpu_action(st: DashboardState, g: int) -> RowAction | str:
    """Cordon GPU `g` (uncordon a cordoned one); cordoning the last GPU taking work warns."""
    if g not in st.gpus:
        return f"gpu{g}: no such GPU on screen now"
    if g in st.jobs.cordoned:
        return RowAction(f"uncordon={g}", f"uncordon gpu{g}: its workers take new partitions again")
    open_ = [i for i in st.gpus if i not in st.jobs.cordoned]
    warn = (f"gpu{g} is the last GPU taking work: cordoning it idles the run until you uncordon one"
            if open_ == [g] else "")
    return RowAction(f"cordon={g}", f"cordon gpu{g}: its workers take no new partition; what runs there finishes",
                     warn)


def prompt_forms(st: DashboardState | None) -> str:
    """The job prompt's examples from what exists now (a live partition, its sector, the GPUs
    that can be cordoned or uncordoned); the fixed forms where the run has none yet."""
    forms: list[str] = []
    live = sorted((p for p in st.partitions.values() if _live(p) and p.phases), key=lambda p: (p.sector, p.index)) \
        if st is not None else []
    if live:
        p = live[0]
        forms += [f"cancel {p.part}", f"cancel s{p.sector}", f"requeue {p.part}"]
    if st is not None:
        forms += [f"cordon {i}" for i in sorted(st.gpus) if i not in st.jobs.cordoned][:1]
        forms += [f"uncordon {i}" for i in sorted(st.jobs.cordoned)][:1]
    return " | ".join(forms)
