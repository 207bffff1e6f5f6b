"""A replay's seek checkpoints: whole fold states at event indices, bounded in count, so that
seeking back folds on from the nearest one instead of from the start.

    points = SeekPoints()
    if points.due(idx): points.take(idx, state)   # first pass, after folding events[:idx]
    idx, state = points.restore(target)           # the last one at or before target: a fresh state

At most `most` are kept. They are taken every `every` events; when one more would pass the
bound, every other one is dropped and the spacing doubles. So a recording of N events costs
at most `most` states of memory and its copying is linear in N (the k-th doubling copies
most/2 states no larger than the state after 2^k x most x every events: a geometric sum), where a
copy every 2000 events held N/2000 states and copied O(N^2) (issue 35: 100k `alloc` events,
47 s and 1.9 GB).

A checkpoint is the state pickled and compressed (zlib level 1): one pass over it (3-5x faster
than copy.deepcopy here) and ~4x smaller again than the pickle while kept (0.4 MB for a state
of 2000 partitions on 8 GPUs). Only states this process made are ever unpickled (never a
file's bytes). The UI's bounded copy (`DashboardState.view()`) cannot
serve: it keeps the recent partitions and timeline only, and the fold cannot go on from it.
"""
from __future__ import annotations

import bisect
import pickle
import zlib

from prover import DashboardState

CHECKPOINT_EVERY = 2000  # events between checkpoints at first (the spacing doubles past MAX)
MAX_CHECKPOINTS = 16  # a seek back folds on at most ~N/8 events (N/16 to N/8 after thinning)


class SeekPoints:
    def __init__(self, every: int = CHECKPOINT_EVERY, most: int = MAX_CHECKPOINTS) -> None:
        self.every = max(1, every)
        self.most = max(2, most)
        self._at: list[int] = []  # event indices, increasing
        self._states: list[bytes] = []
        self.taken = 0  # states copied so far (the copying's cost, with copied_bytes)
        self.copied_bytes = 0

    def __len__(self) -> int:
        return len(self._at)

    @property
    def held_bytes(self) -> int:
        return sum(map(len, self._states))

    def due(self, idx: int) -> bool:
        """Whether a checkpoint belongs after events[:idx] (only past the last one: the first pass)."""
        return idx % self.every == 0 and (not self._at or self._at[-1] < idx)

    def take(self, idx: int, state: DashboardState) -> None:
        data = zlib.compress(pickle.dumps(state, pickle.HIGHEST_PROTOCOL), 1)
        self._at.append(idx)
        self._states.append(data)
        self.taken += 1
        self.copied_bytes += len(data)
        if len(self._at) > self.most:
            self.every *= 2
            keep = [k for k, i in enumerate(self._at) if i % self.every == 0]
            self._at = [self._at[k] for k in keep]
            self._states = [self._states[k] for k in keep]

    def restore(self, target: int) -> tuple[int, DashboardState]:
        """The last checkpoint at or before event index `target`, as a state of its own (or
        the start: index 0, a fresh state)."""
        k = bisect.bisect_right(self._at, target) - 1
        if k < 0:
            return 0, DashboardState()
        return self._at[k], pickle.loads(zlib.decompress(self._states[k]))
