"""Per-partition phase times as a table (CSV), straight from a recording's events.

One row per partition attempt that finished (a retried partition's earlier attempt is the
row before it): where it ran, whether it was pre-staged or fell back, verified, the wall
seconds of each phase, and whether the run was simulated (sums, if a phase ran twice, e.g. a GPU section retried).
Not the fold: the fold forgets old partitions on long runs; a table wants every one.
"""
from __future__ import annotations

import csv
import io
from typing import Any, Iterable

from prover.events import Phase

PHASES = [p.value for p in Phase]
COLUMNS = ["part", "sector", "index", "gpu", "worker", "prestaged", "fallback", "verified", "ok", "queued_s",
           "done_s", "seconds", *(f"{p}_s" for p in PHASES), "reason",
           "simulated"]  # every row of a sim run says its times are modelled (issue 35)


def _row(part: str, sector: int, index: int, queued: float) -> dict[str, Any]:
    return {"part": part, "sector": sector, "index": index, "gpu": "", "worker": "", "prestaged": "",
            "fallback": False, "verified": "", "ok": "", "queued_s": round(queued, 6), "done_s": "", "seconds": "",
            "reason": ""}


def phase_rows(events: Iterable[Any]) -> list[dict[str, Any]]:
    open_rows: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    sim: bool | str = ""  # unknown until run_started
    for e in events:
        k = e.kind
        if k == "run_started":
            sim = e.simulated
            continue
        if k == "partition_queued":
            open_rows[e.part] = _row(e.part, e.sector, e.index, e.t)
            continue
        part = getattr(e, "part", None)
        if part is None:
            continue
        r = open_rows.get(part)
        if r is None:  # a recording that starts mid-run
            r = open_rows[part] = _row(part, -1, -1, e.t)
        if k == "phase_end":
            key = f"{e.phase.value}_s"
            r[key] = round(r.get(key, 0.0) + e.duration, 6)
            if e.gpu is not None:
                r["gpu"], r["worker"] = e.gpu, e.worker
            if e.phase == Phase.prestage and r["prestaged"] == "" and not r["fallback"]:
                r["prestaged"] = e.ok
        elif k == "fallback":
            r["fallback"], r["prestaged"] = True, False
        elif k == "proof_result" and e.checked:
            r["verified"] = e.ok
        elif k == "partition_done":
            r.update(ok=e.ok, done_s=round(e.t, 6), seconds=round(e.seconds, 6), reason=e.reason or "", simulated=sim)
            rows.append(open_rows.pop(part))
    return rows


def phase_csv(events: Iterable[Any]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, restval="", lineterminator="\n")
    w.writeheader()
    w.writerows(phase_rows(events))
    return buf.getvalue()
