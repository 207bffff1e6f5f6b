"""Row actions (issue 36): select a partition row (Tab to the partitions, ↑ ↓) and press a key:
`c` cancel the partition, `x` cancel its sector, `r` requeue it, `o` cordon (or uncordon) its
GPU. Each asks first, naming exactly what it will do (c2tui/widgets/confirm_action.py), and goes
through the controller as the job prompt does (recorded with source key). Only what exists now
is offered: a finished partition cannot be cancelled, a queued one not requeued; cordoning the
last GPU that still takes work says it idles the run. The job prompt's examples (`a`) are made
from the run's own ids the same way (`prompt_forms`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KEYS = {"c": "cancel the selected partition", "x": "cancel its sector", "r": "requeue it",
        "o": "cordon / uncordon its GPU"}


@dataclass(frozen=True)
class RowAction:
    spec: str  # the controller's form: "cancel=s3p2", "cordon=1"
    words: str  # what it will do, in full
    warn: str = ""  # said above the question (the last GPU taking work)


def _live(p: Any) -> bool:
    return p.done_t is None


def row_action(st: Any, part: str, key: str) -> RowAction | str:
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
        left = [q.part for q in st.partitions.values() if q.sector == p.sector and _live(q)]
        if not left or p.sector < 0:
            return f"sector s{p.sector} has nothing left to cancel"
        return RowAction(f"cancel=s{p.sector}", f"cancel sector s{p.sector}: its {len(left)} unfinished partition(s) "
                                                f"({', '.join(sorted(left)[:6])}{' …' if len(left) > 6 else ''})")
    if what == "requeue":
        if not _live(p) or not p.phases:
            return f"{part} is {'finished' if not _live(p) else 'still queued'}: nothing to requeue"
        return RowAction(f"requeue={part}", f"requeue partition {part}{where}: it stops at its next boundary and "
                                            "goes back to the front of its queue")
    return _cordon(st, p)


def _cordon(st: Any, p: Any) -> RowAction | str:
    if p.gpu is None:
        return f"{p.part} has no GPU yet: nothing to cordon"
    g = p.gpu
    if g in st.jobs.cordoned:
        return RowAction(f"uncordon={g}", f"uncordon gpu{g}: its workers take new partitions again")
    open_ = [i for i in st.gpus if i not in st.jobs.cordoned]
    warn = (f"gpu{g} is the last GPU taking work: cordoning it idles the run until you uncordon one"
            if open_ == [g] else "")
    return RowAction(f"cordon={g}", f"cordon gpu{g}: its workers take no new partition; what runs there finishes",
                     warn)


def prompt_forms(st: Any) -> str:
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
