"""The threads one partition's host phases run on (the `host_threads` knob, prover/knobs.py).

A partition's host work is data-parallel: the witness's lanes are independent, A.z, B.z and
C.z are independent per row, prep_msm's two passes per variable range. Each of those calls a
compiled nogil kernel on chunks (prover/groth16/witness_nb.py, prover/host/matvec.py,
prover/groth16/prep_nb.py) through `run_chunks`: the calling thread and at most
`threads - 1` helpers of one process-wide pool take the next chunk until none is left, so an
uneven chunk (a field-valued row, a lane that writes more) never leaves the others idle.

Why a pool of nogil kernels and not numba's `parallel=True`: numba's default threading layer
(workqueue; TBB is not installed) is not safe to call from several threads at once, and every
worker proves its own partition on its own thread; its thread count is also one per process
where here each call says its own (a live knob). The pool grows to what is asked (idle
threads cost nothing) and is never nested: a chunk never submits chunks.

Same bytes at any thread count: every chunk writes its own rows, lanes or variables (and
prep_msm's fill writes at offsets its counting pass fixed), so the output is the one-thread
output, which is the numpy reference's (tests/unit/test_host_threads.py).
"""
from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

MAX_THREADS = 256  # a partition's threads (the knob's bound); the pool never holds more
CHUNKS_PER_THREAD = 4  # chunks a thread's share is cut into: balance without per-call overhead

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def cores() -> int:
    """The cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def auto_threads(workers: int) -> int:
    """host_threads=auto: this host's cores shared by the workers proving at once (>= 1)."""
    return max(1, cores() // max(1, workers))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="host-chunk")
        return _pool


def run_chunks(n_chunks: int, threads: int, body: Callable[[int], None]) -> None:
    """body(i) for every i in range(n_chunks), on at most `threads` threads (the caller is one
    of them); returns once all ran; the first exception is raised after all have stopped."""
    helpers = min(max(1, threads), n_chunks, MAX_THREADS) - 1
    if helpers <= 0:
        for i in range(n_chunks):
            body(i)
        return
    nxt = itertools.count()  # next() is atomic under the GIL: each index is taken once
    failed: list[BaseException] = []

    def take() -> None:
        while not failed:
            i = next(nxt)
            if i >= n_chunks:
                return
            try:
                body(i)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                failed.append(exc)

    pool = _executor()
    futures: list[Future] = [pool.submit(take) for _ in range(helpers)]
    take()
    for f in futures:
        f.result()
    if failed:
        raise failed[0]


def chunk_count(threads: int, items: int, min_items: int) -> int:
    """How many chunks to cut `items` into for `threads`: CHUNKS_PER_THREAD a thread, none
    smaller than `min_items` (a kernel call's fixed cost), at least one."""
    if threads <= 1:
        return 1
    return max(1, min(threads * CHUNKS_PER_THREAD, items // max(1, min_items)))


def even_bounds(items: int, chunks: int) -> list[int]:
    """chunks + 1 boundaries cutting range(items) into near-equal parts."""
    return [items * i // chunks for i in range(chunks + 1)]


# --- the host_threads knob's values (prover/knobs.py) ----------------------------------------------
ACCEPTS = "N|auto"
AUTO = 0  # the knob's value for auto


def parse_spec(v: object) -> int:
    """host_threads from a number or its text: N (1..MAX_THREADS) or auto (0); ValueError naming it once."""
    bad = ValueError(f"host_threads: a number of threads 1..{MAX_THREADS} or auto, not {v!r}")
    if isinstance(v, str) and v.strip().lower() == "auto":
        return AUTO
    if isinstance(v, str) and v.strip().isdigit():
        n = int(v.strip())
    elif isinstance(v, int) and not isinstance(v, bool):
        n = v
    else:
        raise bad
    if not 0 <= n <= MAX_THREADS:
        raise bad
    return n


def show(v: object) -> str:
    return "auto" if v == AUTO or v == str(AUTO) else str(v)


def resolve(value: int, workers: int) -> int:
    """The threads a partition's host phases use: the knob's number, or auto's share of the cores."""
    return value if value > 0 else auto_threads(workers)


def threads_line(value: int, workers: int) -> str:
    """The start-up line: the threads a partition's host phases use and where that comes from."""
    n = resolve(value, workers)
    where = f"auto: this host's {cores()} cores / {workers} workers" if value == AUTO else "host_threads"
    return (f"host threads: {n} a partition ({where}); the witness's lanes, A.z B.z C.z's rows and prep_msm's "
            f"variables split over them; host_threads N models another host (live)")
