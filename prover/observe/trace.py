"""A recording as Chrome trace event JSON (opens in ui.perfetto.dev and chrome://tracing).

    trace = to_trace(recording)          # {"traceEvents": [...], "displayTimeUnit": "ms", ...}
    problems = prover.observe.trace_check.validate(trace)

Layout: one process per GPU (named "GPU 0: NVIDIA H200 ..."), plus a "run" process for
mode changes and the run's own instants. In each GPU process: a track per lock for its
holds, a track per worker for its phases (prep_msm runs beside the GPU phases on a CPU
thread, so it gets a track of its own), a track per worker for its lock waits, counter
tracks for VRAM (live, pool reserved/used, NVML used, budget) and utilisation, and instant
events for fallbacks, OOMs, stalls and failed proofs and partitions. A device-global sync
under mem (mem_sync=device) is a span "device sync behind g0w0 s3p1" nested in the worker's
pre-stage.

Spans are complete events ("X") in whole microseconds. Rounding is monotonic, so spans that
nest in seconds still nest in microseconds; a span that would overlap another on its track
without nesting (never expected: it would mean two holders of one lock) goes to an overflow
track named "... (2)" rather than breaking the format's rule.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prover.disciplines import lock_order
from prover.record import Recording

RUN_PID = 1
GIB = float(1 << 30)


def _us(t: float) -> int:
    return int(round(t * 1e6))


def gpu_pid(gpu: int) -> int:
    return 10 + gpu


@dataclass
class _Span:
    name: str
    t0: float
    t1: float
    cat: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Track:
    """A named track before placement; spans land on lanes (tids) so that each lane nests."""

    pid: int
    name: str
    sort: int
    spans: list[_Span] = field(default_factory=list)


class TraceBuilder:
    def __init__(self) -> None:
        self.meta: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.tracks: dict[tuple[int, str], _Track] = {}
        self.procs: dict[int, str] = {}
        self._tids: dict[tuple[int, str], int] = {}
        self._next_tid: dict[int, int] = {}

    def process(self, pid: int, name: str, sort: int) -> None:
        if pid in self.procs:
            if self.procs[pid] != name:  # a GpuInfo after first use renames it
                for m in self.meta:
                    if m["pid"] == pid and m["name"] == "process_name":
                        m["args"]["name"] = name
                self.procs[pid] = name
            return
        self.procs[pid] = name
        self.meta.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}})
        self.meta.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": sort}})

    def tid(self, pid: int, name: str, sort: int) -> int:
        """The thread id of a named lane, made (with its thread_name) on first use."""
        key = (pid, name)
        if key not in self._tids:
            t = self._next_tid.get(pid, 1)
            self._next_tid[pid] = t + 1
            self._tids[key] = t
            self.meta.append({"ph": "M", "pid": pid, "tid": t, "name": "thread_name", "args": {"name": name}})
            self.meta.append({"ph": "M", "pid": pid, "tid": t, "name": "thread_sort_index", "args": {"sort_index": sort}})
        return self._tids[key]

    def span(self, pid: int, track: str, sort: int, s: _Span) -> None:
        tr = self.tracks.setdefault((pid, track), _Track(pid, track, sort))
        tr.spans.append(s)

    def instant(self, pid: int, tid: int, name: str, t: float, cat: str, scope: str = "t", **args: Any) -> None:
        self.events.append({"ph": "i", "pid": pid, "tid": tid, "name": name, "cat": cat, "ts": _us(t), "s": scope,
                            "args": args})

    def counter(self, pid: int, name: str, t: float, **values: float) -> None:
        """A counter sample; Perfetto names the track "<name> <arg>" (e.g. "VRAM live GiB")."""
        self.events.append({"ph": "C", "pid": pid, "tid": 0, "name": name, "ts": _us(t),
                            "args": {k: float(v) for k, v in values.items()}})

    def _place(self, tr: _Track) -> None:
        lanes: list[list[int]] = []  # per lane: stack of open span ends (us)
        for s in sorted(tr.spans, key=lambda s: (_us(s.t0), -_us(s.t1))):
            a, b = _us(s.t0), max(_us(s.t0), _us(s.t1))
            for k, stack in enumerate(lanes):
                while stack and stack[-1] <= a:
                    stack.pop()
                if not stack or b <= stack[-1]:
                    break
            else:
                k, stack = len(lanes), []
                lanes.append(stack)
            stack.append(b)
            name = tr.name if k == 0 else f"{tr.name} ({k + 1})"
            tid = self.tid(tr.pid, name, tr.sort + k)
            self.events.append({"ph": "X", "pid": tr.pid, "tid": tid, "name": s.name, "cat": s.cat, "ts": a,
                                "dur": b - a, "args": s.args})

    def build(self, other: dict[str, Any]) -> dict[str, Any]:
        for tr in self.tracks.values():
            self._place(tr)
        self.events.sort(key=lambda e: (e["ts"], e["pid"], e["tid"]))
        return {"traceEvents": self.meta + self.events, "displayTimeUnit": "ms", "otherData": other}


# track sort order inside a GPU process: locks, then per worker its phases, prep_msm, waits
def _worker_sort(worker: str, order: dict[str, int], kind: int) -> int:
    return 100 + 10 * order.setdefault(worker, len(order)) + kind


class _Converter:
    def __init__(self) -> None:
        self.b = TraceBuilder()
        self.worker_gpu: dict[str, int] = {}
        self.part_gpu: dict[str, int] = {}
        self.order: dict[str, int] = {}
        self.phases: dict[tuple[str, str], Any] = {}        # (part, phase) -> PhaseStart
        self.waits: dict[tuple[int, str, str], float] = {}   # (gpu, lock, worker) -> requested t
        self.holds: dict[tuple[int, str], Any] = {}          # (gpu, lock) -> LockAcquired
        self.live: dict[int, int] = {}
        self.t_end = 0.0
        self.sim = True
        self.b.process(RUN_PID, "run", 0)

    def gpu_proc(self, gpu: int) -> int:
        pid = gpu_pid(gpu)
        if pid not in self.b.procs:
            self.b.process(pid, f"GPU {gpu}", 1 + gpu)
        return pid

    def worker_tid(self, gpu: int, worker: str) -> int:
        return self.b.tid(self.gpu_proc(gpu), f"{worker} phases", _worker_sort(worker, self.order, 0))

    def run_tid(self) -> int:
        return self.b.tid(RUN_PID, "run events", 0)

    def feed(self, e: Any) -> None:
        self.t_end = max(self.t_end, e.t)
        h = getattr(self, "_" + e.kind, None)
        if h is not None:
            h(e)

    def _run_started(self, e: Any) -> None:
        self.sim = e.simulated
        label = "SIMULATED" if e.simulated else "native"
        self.b.process(RUN_PID, f"run: {e.backend} ({label}), profile {e.profile}, proved 2^{e.proved_log2}, "
                                f"modelled 2^{e.modelled_log2}", 0)
        self.b.instant(RUN_PID, self.run_tid(), "run started", e.t, "run", "g", **e.config)

    def _gpu_info(self, e: Any) -> None:
        label = "simulated" if e.simulated else ("native" if e.nvml else "native, no NVML")
        self.gpu_proc(e.gpu)
        self.b.process(gpu_pid(e.gpu), f"GPU {e.gpu}: {e.name} ({label})", 1 + e.gpu)
        self.b.counter(gpu_pid(e.gpu), "VRAM budget", e.t, GiB=e.budget_bytes / GIB)

    def _worker_started(self, e: Any) -> None:
        self.worker_gpu[e.worker] = e.gpu
        self.worker_tid(e.gpu, e.worker)

    def _phase_start(self, e: Any) -> None:
        self.phases[(e.part, e.phase.value)] = e
        if e.gpu is not None:
            self.part_gpu[e.part] = e.gpu

    def _phase_end(self, e: Any) -> None:
        st = self.phases.pop((e.part, e.phase.value), None)
        t0 = st.t if st is not None else e.t - e.duration
        gpu = e.gpu if e.gpu is not None else self.worker_gpu.get(e.worker, self.part_gpu.get(e.part))
        args = {"part": e.part, "impl": getattr(st, "impl", "?"), "ok": e.ok}
        if e.error:
            args["error"] = e.error
        self._phase_span(gpu, e.worker, e.phase.value, t0, e.t, args)

    def _phase_span(self, gpu: int | None, worker: str, phase: str, t0: float, t1: float, args: dict) -> None:
        name = phase if args.get("ok", True) else f"{phase} (failed)"
        side = phase == "prep_msm"
        track = f"{worker} prep_msm (CPU thread)" if side else f"{worker} phases"
        if gpu is None:
            self.b.span(RUN_PID, track, 10, _Span(name, t0, t1, "phase", args))
        else:
            self.b.span(self.gpu_proc(gpu), track, _worker_sort(worker, self.order, 1 if side else 0),
                        _Span(name, t0, t1, "phase", args))

    def _lock_requested(self, e: Any) -> None:
        self.waits[(e.gpu, e.lock, e.worker)] = e.t

    def _lock_acquired(self, e: Any) -> None:
        t0 = self.waits.pop((e.gpu, e.lock, e.worker), e.t - e.wait)
        self.b.span(self.gpu_proc(e.gpu), f"{e.worker} lock waits", _worker_sort(e.worker, self.order, 2),
                    _Span(f"wait {e.lock}", t0, e.t, "wait", {"part": e.part, "wait_s": e.wait}))
        self.holds[(e.gpu, e.lock)] = e

    def _lock_released(self, e: Any) -> None:
        acq = self.holds.get((e.gpu, e.lock))
        if acq is not None and acq.worker == e.worker:
            del self.holds[(e.gpu, e.lock)]
            t0 = acq.t
        else:
            t0 = e.t - e.hold
        self.b.span(self.gpu_proc(e.gpu), f"lock {e.lock} holds", _lock_sort(e.lock),
                    _Span(f"{e.worker} {e.part or ''}".strip(), t0, e.t, "lock",
                          {"worker": e.worker, "part": e.part, "hold_s": e.hold}))

    def _alloc(self, e: Any) -> None:
        self.live[e.gpu] = self.live.get(e.gpu, 0) + e.bytes
        self.b.counter(self.gpu_proc(e.gpu), "VRAM live", e.t, GiB=self.live[e.gpu] / GIB)

    def _free(self, e: Any) -> None:
        self.live[e.gpu] = max(0, self.live.get(e.gpu, 0) - e.bytes)
        self.b.counter(self.gpu_proc(e.gpu), "VRAM live", e.t, GiB=self.live[e.gpu] / GIB)

    def _vram_sample(self, e: Any) -> None:
        pid = self.gpu_proc(e.gpu)
        self.b.counter(pid, "VRAM pool reserved", e.t, GiB=e.pool_reserved / GIB)
        self.b.counter(pid, "VRAM pool used", e.t, GiB=e.pool_used / GIB)
        if e.device_used is not None:
            self.b.counter(pid, "NVML used", e.t, GiB=e.device_used / GIB)
        if e.util is not None:
            name = "GPU utilisation" + (" (modelled)" if self.sim else "")
            self.b.counter(pid, name, e.t, **{"%": 100.0 * e.util})

    def _fallback(self, e: Any) -> None:
        self.b.instant(self.gpu_proc(e.gpu), self.worker_tid(e.gpu, e.worker), "fallback", e.t, "fallback",
                       part=e.part, reason=e.reason)

    def _oom(self, e: Any) -> None:
        self.b.instant(self.gpu_proc(e.gpu), self.worker_tid(e.gpu, e.worker), "OOM", e.t, "oom",
                       part=e.part, requested=e.requested, free=e.free, outcome=e.outcome or "not said")

    def _device_sync_end(self, e: Any) -> None:
        """The mem holder's device-global sync, nested in its pre-stage on the worker's track."""
        behind = e.behind_worker if e.behind_worker is None or not e.behind_part else f"{e.behind_worker} {e.behind_part}"
        self.b.span(self.gpu_proc(e.gpu), f"{e.worker} phases", _worker_sort(e.worker, self.order, 0),
                    _Span(f"device sync behind {behind or 'nobody'}", e.start, e.t, "device_sync",
                          {"part": e.part, "behind_worker": e.behind_worker, "behind_part": e.behind_part,
                           "wait_s": e.duration, "pool_trim": e.trim}))

    def _mode_change(self, e: Any) -> None:
        self.b.instant(RUN_PID, self.run_tid(), f"{e.knob}: {e.old} -> {e.new}", e.t, "mode", "g",
                       knob=e.knob, old=e.old, new=e.new, source=e.source)

    def _stall(self, e: Any) -> None:
        pid, tid = (RUN_PID, self.run_tid()) if e.gpu is None else (self.gpu_proc(e.gpu), self.worker_tid(e.gpu, e.worker))
        self.b.instant(pid, tid, f"stall: {e.what} {e.name}", e.t, "stall", part=e.part, seconds=e.seconds)

    def _proof_result(self, e: Any) -> None:
        if e.checked and not e.ok:
            self._part_instant(e.part, f"proof FAILED {e.part}", e.t, "proof", reason=e.reason)

    def _partition_done(self, e: Any) -> None:
        if not e.ok:
            self._part_instant(e.part, f"partition failed {e.part}", e.t, "partition", reason=e.reason)

    def _part_instant(self, part: str, name: str, t: float, cat: str, **args: Any) -> None:
        gpu = self.part_gpu.get(part)
        pid = RUN_PID if gpu is None else self.gpu_proc(gpu)
        tid = self.run_tid() if gpu is None else self.b.tid(pid, "proofs and partitions", 2)
        self.b.instant(pid, tid, name, t, cat, "p" if gpu is not None else "g", part=part, **args)

    def _run_ended(self, e: Any) -> None:
        self.b.instant(RUN_PID, self.run_tid(), f"run ended: {e.reason}", e.t, "run", "g")

    def finish(self) -> None:
        """Spans still open when the recording stops end at its last event (marked open)."""
        for (part, phase), st in list(self.phases.items()):
            gpu = st.gpu if st.gpu is not None else self.worker_gpu.get(st.worker)
            self._phase_span(gpu, st.worker, phase, st.t, self.t_end, {"part": part, "impl": st.impl, "open": True})
        for (gpu, lock), acq in self.holds.items():
            self.b.span(self.gpu_proc(gpu), f"lock {lock} holds", _lock_sort(lock),
                        _Span(f"{acq.worker} {acq.part or ''}".strip(), acq.t, self.t_end, "lock",
                              {"worker": acq.worker, "part": acq.part, "open": True}))
        for (gpu, lock, worker), t0 in self.waits.items():
            self.b.span(self.gpu_proc(gpu), f"{worker} lock waits", _worker_sort(worker, self.order, 2),
                        _Span(f"wait {lock}", t0, self.t_end, "wait", {"open": True}))


def _lock_sort(lock: str) -> int:
    """Lock hold tracks in the disciplines' global lock order (an unknown lock last)."""
    order = lock_order()
    return order.index(lock) if lock in order else len(order)


def to_trace(rec: Recording) -> dict[str, Any]:
    """Convert a recording (its valid prefix, if damaged) to a Chrome trace event object."""
    c = _Converter()
    for e in rec.events:
        c.feed(e)
    c.finish()
    h = rec.header
    other = {"source": "c2tui recording", "created": h.created if h else None, "argv": " ".join(h.argv) if h else "",
             "recording_error": rec.error, "time_unit": "ts/dur in microseconds since run start",
             # the whole trace's word on what its figures are (issue 35), beside the processes' names
             "simulated": c.sim, "figures": "SIMULATED (modelled times and sizes)" if c.sim else "native"}
    return c.b.build(other)
