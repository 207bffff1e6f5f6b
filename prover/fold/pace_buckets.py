"""The pace's one-second buckets (prover/fold/pace.py folds into them and reads them): one GPU's
recent seconds, what is open now, and what the seconds no longer kept held.

A closed span adds into the buckets of the seconds it covered ([seconds, spans ended, their
seconds] for each key, in one flat list a second; most spans end in the second they began: one
bucket) and into the kept buckets' sums; a bucket the window has left is dropped once, its sums
moved into the run's. The fold's hot path: an event does O(1) work in place and makes nothing
the garbage collector keeps counting.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

# the run's figures of one key: [seconds, spans ended, their seconds]
Acc = list


def _acc(d: dict[str, Acc], key: str) -> Acc:
    got = d.get(key)
    if got is None:
        got = d[key] = [0.0, 0, 0.0]
    return got


@dataclass
class GpuPace:
    """One GPU's recent seconds, what is open now, and what the seconds no longer kept held.

    A second's bucket and the kept sums are flat lists: for each key (a label or HELD) at its
    offset, [seconds, spans ended, their seconds]; one list a second, not a dict of one list a
    key (those were ~10 objects a GPU a second for the garbage collector to count: at 64 GPUs
    they doubled its collections)."""

    keys: dict[str, int] = field(default_factory=dict)  # key -> its offset, the first seen first
    buckets: dict[int, list[float]] = field(default_factory=dict)  # second -> its figures, by offset
    # (worker, key) -> when its span began: what is open now, the first opened first (a key: a
    # phase's name, "wait:<lock>", PREP_WAIT, HOST_RAM_WAIT); b_g2_gpu: the workers whose open
    # b_g2_msm runs on the GPU (its label B_G2_GPU)
    opened: dict[tuple[str, str], float] = field(default_factory=dict)
    b_g2_gpu: set[str] = field(default_factory=set)
    hold_open: float | None = None
    workers: set[str] = field(default_factory=set)
    first_t: float | None = None  # its first worker's start
    first_compute_t: float | None = None  # nothing is counted before it
    presence: list[tuple[float, int]] = field(default_factory=list)  # (t, workers from t on), recent changes
    worker_s: float = 0.0  # workers present x seconds since first_compute_t, up to presence[-1]'s t
    # the kept buckets summed (by offset), a span at a time: a reading subtracts the one or two
    # the window has left instead of adding ~30 up; and by key, what the dropped buckets held
    # with the parts of spans older than the kept seconds (the run's: old + kept)
    kept: list[float] = field(default_factory=list)
    old: dict[str, Acc] = field(default_factory=dict)
    low: int = 0  # no bucket is older than this second (the next to drop, once the window leaves it)

    def key(self, key: str) -> int:
        """A key's offset, made on first sight (every bucket grows by its three figures)."""
        i = self.keys[key] = len(self.kept)
        self.kept += (0.0, 0.0, 0.0)
        for b in self.buckets.values():
            b += (0.0, 0.0, 0.0)
        return i

    def bucket(self, sec: int, keep_from: float) -> list[float]:
        """A new bucket for second `sec` (the ones older than `keep_from` dropped first: each
        second once, from `low` on, not a scan of the kept ones at every new second)."""
        buckets = self.buckets
        if self.low + 1 < keep_from:
            if keep_from - self.low > 2 * len(buckets) + 2:  # a long quiet stretch: a scan is shorter
                for k in [k for k in buckets if k + 1 < keep_from]:
                    self._forget(buckets.pop(k))
                self.low = math.ceil(keep_from - 1)  # what is left: k + 1 >= keep_from
            else:
                low = self.low
                while low + 1 < keep_from:
                    gone = buckets.pop(low, None)
                    if gone is not None:
                        self._forget(gone)
                    low += 1
                self.low = low
        if sec < self.low:  # a span's time before the latest event's (workers' events interleave)
            self.low = sec
        b = buckets[sec] = [0.0] * len(self.kept)
        return b

    def _forget(self, b: list[float]) -> None:
        kept, old = self.kept, self.old
        for k, i in self.keys.items():
            s, n, dur = b[i], b[i + 1], b[i + 2]
            if not (s or n):
                continue
            kept[i] -= s
            kept[i + 1] -= n
            kept[i + 2] -= dur
            o = old.get(k)
            if o is None:
                o = old[k] = [0.0, 0, 0.0]
            o[0] += s
            o[1] += n
            o[2] += dur

    def totals(self) -> dict[str, Acc]:
        """The run's, by key: [seconds, spans ended, their seconds] since the first compute acquire."""
        out = {k: list(v) for k, v in self.old.items()}
        kept = self.kept
        for k, i in self.keys.items():
            o = _acc(out, k)
            o[0] += kept[i]
            o[1] += kept[i + 1]
            o[2] += kept[i + 2]
        return out


def add_span(g: GpuPace, t0: float, t1: float, key: str, keep_from: float) -> None:
    """A span of `key` over [t0, t1] closed: its seconds after the first compute acquire into the
    buckets of the seconds it covered (those still kept; an older part straight into the run's),
    and its end counted in its last second (the mean a partition); the kept sums by the whole
    span. The fold's hot path: most spans end in the second they began, one bucket and one Acc;
    a longer one an Acc a second."""
    first = g.first_compute_t
    if first is None or t1 <= first:
        return
    a = t0 if t0 > first else first
    if a < keep_from:  # a span longer than the window: its part before the kept seconds
        _acc(g.old, key)[0] += (t1 if t1 < keep_from else keep_from) - a
        a = keep_from
    i = g.keys.get(key)
    if i is None:
        i = g.key(key)
    kept, buckets = g.kept, g.buckets
    sec, last = int(a), int(t1)  # times are >= 0: int() floors
    if sec > last:  # begun a second after it ended (events out of time order): its end, no seconds
        b = buckets.get(last)
        if b is None:
            b = g.bucket(last, keep_from)
        for d in (kept, b):
            d[i + 1] += 1
            d[i + 2] += t1 - t0
        return
    kept[i] += t1 - a
    kept[i + 1] += 1
    kept[i + 2] += t1 - t0
    if sec == last:
        b = buckets.get(sec)
        if b is None:
            b = g.bucket(sec, keep_from)
        b[i] += t1 - a
        b[i + 1] += 1
        b[i + 2] += t1 - t0
        return
    # over several seconds: the first in part, those between whole, the last in part with its end
    b = buckets.get(sec)
    (b if b is not None else g.bucket(sec, keep_from))[i] += sec + 1 - a
    for between in range(sec + 1, last):
        b = buckets.get(between)
        (b if b is not None else g.bucket(between, keep_from))[i] += 1.0
    b = buckets.get(last)
    if b is None:
        b = g.bucket(last, keep_from)
    b[i] += t1 - last  # 0 where t1 is on the second's boundary: its end is counted there
    b[i + 1] += 1
    b[i + 2] += t1 - t0
