"""The rules of the Chrome trace event format (JSON object form) that c2tui's exports keep.

From the format's documentation (Trace Event Format, Google, "JSON Object Format"): events in
`traceEvents`; `ts`/`dur` in microseconds; complete events ("X") carry `dur`; instant events
("i"/"I") a scope `s` of g, p or t; counter events ("C") numeric `args`; metadata events ("M")
`process_name`/`thread_name` with `args.name`. On top of the format, what makes a trace read
well in Perfetto and chrome://tracing: spans on one track nest (no partial overlap), and every
process and thread that carries an event is named.
"""
from __future__ import annotations

import math
from typing import Any

PHASES = {"X", "B", "E", "i", "I", "C", "M"}
META = {"process_name", "thread_name", "process_sort_index", "thread_sort_index", "process_labels"}


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _event_problems(i: int, e: Any) -> list[str]:
    if not isinstance(e, dict):
        return [f"event {i}: not an object"]
    ph = e.get("ph")
    out = []
    if ph not in PHASES:
        out.append(f"event {i}: unknown ph {ph!r}")
    if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
        out.append(f"event {i}: pid and tid must be integers")
    if not isinstance(e.get("name"), str):
        out.append(f"event {i}: no name")
    if ph != "M" and not (_num(e.get("ts")) and e["ts"] >= 0):
        out.append(f"event {i} ({e.get('name')}): ts missing or negative")
    if ph == "X" and not (_num(e.get("dur")) and e["dur"] >= 0):
        out.append(f"event {i} ({e.get('name')}): complete event without dur >= 0")
    if ph in ("i", "I") and e.get("s", "t") not in ("g", "p", "t"):
        out.append(f"event {i}: instant scope {e.get('s')!r} is not g, p or t")
    if ph == "C":
        args = e.get("args")
        if not isinstance(args, dict) or not args or not all(_num(v) for v in args.values()):
            out.append(f"event {i} ({e.get('name')}): counter args must be numbers")
    if ph == "M":
        if e.get("name") not in META:
            out.append(f"event {i}: unknown metadata {e.get('name')!r}")
        elif e["name"].endswith("_name") and not isinstance((e.get("args") or {}).get("name"), str):
            out.append(f"event {i}: {e['name']} without args.name")
    return out


def _nesting_problems(spans: dict[tuple[int, int], list[tuple[float, float, str]]]) -> list[str]:
    out = []
    for (pid, tid), items in spans.items():
        stack: list[tuple[float, str]] = []
        for ts, end, name in sorted(items, key=lambda x: (x[0], -x[1])):
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if stack and end > stack[-1][0]:
                out.append(f"pid {pid} tid {tid}: {name!r} [{ts}, {end}] overlaps {stack[-1][1]!r} "
                           f"(ends {stack[-1][0]}) without nesting")
            stack.append((end, name))
    return out


def validate(trace: Any) -> list[str]:
    """Every rule broken, as one line each; [] for a good trace."""
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["not a trace: want an object with a traceEvents list"]
    problems: list[str] = []
    procs: set[int] = set()
    threads: set[tuple[int, int]] = set()
    used_p: set[int] = set()
    used_t: set[tuple[int, int]] = set()
    spans: dict[tuple[int, int], list[tuple[float, float, str]]] = {}
    for i, e in enumerate(trace["traceEvents"]):
        bad = _event_problems(i, e)
        problems += bad
        if bad:
            continue
        key = (e["pid"], e["tid"])
        if e["ph"] == "M":
            if e["name"] == "process_name":
                procs.add(e["pid"])
            elif e["name"] == "thread_name":
                threads.add(key)
            continue
        used_p.add(e["pid"])
        if e["ph"] != "C":  # counters belong to the process
            used_t.add(key)
        if e["ph"] == "X":
            spans.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    problems += [f"pid {p} has events but no process_name" for p in sorted(used_p - procs)]
    problems += [f"pid {p} tid {t} has events but no thread_name" for p, t in sorted(used_t - threads)]
    return problems + _nesting_problems(spans)
