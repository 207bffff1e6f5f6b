"""The rules of the Chrome trace event format (JSON object form) that c2tui's exports keep.

From the format's documentation (Trace Event Format, Google, "JSON Object Format"): events in
`traceEvents`; `ts`/`dur` in microseconds; complete events ("X") carry `dur`; instant events
("i"/"I") a scope `s` of g, p or t; counter events ("C") numeric `args`; metadata events ("M")
`process_name`/`thread_name` with `args.name`. The per-event rules are pydantic models (one
discriminated union on `ph`, the wire format's schema); on top of them, what makes a trace
read well in Perfetto and chrome://tracing: spans on one track nest (no partial overlap), and
every process and thread that carries an event is named.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError, field_validator

Micros = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _Ev(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    pid: StrictInt
    tid: StrictInt


class Complete(_Ev):
    ph: Literal["X"]
    ts: Micros
    dur: Micros


class BeginEnd(_Ev):
    ph: Literal["B", "E"]
    ts: Micros


class Instant(_Ev):
    ph: Literal["i", "I"]
    ts: Micros
    s: Literal["g", "p", "t"] = "t"


class Counter(_Ev):
    ph: Literal["C"]
    ts: Micros
    args: dict[str, float] = Field(min_length=1)

    @field_validator("args", mode="before")
    @classmethod
    def _numbers(cls, v: Any) -> Any:
        if isinstance(v, dict) and any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v.values()):
            raise ValueError("counter args must be numbers")
        return v


class _Name(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class _Sort(BaseModel):
    sort_index: int


class NameMeta(_Ev):
    ph: Literal["M"]
    name: Literal["process_name", "thread_name"]
    args: _Name


class SortMeta(_Ev):
    ph: Literal["M"]
    name: Literal["process_sort_index", "thread_sort_index"]
    args: _Sort


class LabelsMeta(_Ev):
    ph: Literal["M"]
    name: Literal["process_labels"]


Meta = Annotated[Union[NameMeta, SortMeta, LabelsMeta], Field(discriminator="name")]
TraceEvent = Annotated[Union[Complete, BeginEnd, Instant, Counter, Meta], Field(discriminator="ph")]
EVENT: TypeAdapter[Any] = TypeAdapter(TraceEvent)


def _problem(i: int, raw: Any, exc: ValidationError) -> str:
    e = exc.errors()[0]
    loc = ".".join(str(x) for x in e.get("loc", ()) if not str(x).startswith(("function-", "tagged-union")))
    name = raw.get("name") if isinstance(raw, dict) else None
    return f"event {i}{f' ({name})' if name else ''}: {loc + ': ' if loc else ''}{e.get('msg')}"


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
    for i, raw in enumerate(trace["traceEvents"]):
        try:
            e = EVENT.validate_python(raw)
        except ValidationError as exc:
            problems.append(_problem(i, raw, exc))
            continue
        key = (e.pid, e.tid)
        if isinstance(e, NameMeta):
            (procs.add(e.pid) if e.name == "process_name" else threads.add(key))
            continue
        if e.ph == "M":
            continue
        used_p.add(e.pid)
        if not isinstance(e, Counter):  # counters belong to the process
            used_t.add(key)
        if isinstance(e, Complete):
            spans.setdefault(key, []).append((e.ts, e.ts + e.dur, e.name))
    problems += [f"pid {p} has events but no process_name" for p in sorted(used_p - procs)]
    problems += [f"pid {p} tid {t} has events but no thread_name" for p, t in sorted(used_t - threads)]
    return problems + _nesting_problems(spans)
