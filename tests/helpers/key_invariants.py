"""An event sink that checks the key ring's invariants (prover/pipeline/keys/key_ring.py) from the
event stream alone: host bytes (keys and workers) never above the host-RAM budget, no key
evicted while a partition of its size is in flight (its synthesis started, its verify not
ended), every key load that starts ends. Events reach sinks under the engine's emit lock in
the order the state changed (HostRam under the host-RAM lock), so the checks are exact."""
from __future__ import annotations

import re
from typing import Any

from prover.knobs import KNOBS


class KeyChecker:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.violations: list[str] = []
        self.held: dict[tuple[str, str], int] = {}
        self.budget = 0
        self.size_of_sector: dict[int, int] = {}
        self.in_flight: dict[str, int] = {}  # partition -> its size, synthesis start .. verify end
        self.loading: set[int] = set()
        self.peak = 0

    def __call__(self, e: Any) -> None:
        self.events.append(e)
        handler = getattr(self, "_" + e.kind, None)
        if handler is not None:
            handler(e)

    def _run_started(self, e: Any) -> None:
        self.budget = int(e.config.get("host_ram_budget", 0) or 0)

    def _mode_change(self, e: Any) -> None:
        if e.knob == "host_ram_budget":
            self.budget = KNOBS["host_ram_budget"].parse(e.new)

    def _sector_submitted(self, e: Any) -> None:
        self.size_of_sector[e.sector] = e.log2

    def _host_ram(self, e: Any) -> None:
        self.held[(e.owner, e.name)] = e.bytes
        total = sum(self.held.values())
        self.peak = max(self.peak, total)
        if self.budget and total > self.budget:
            self.violations.append(f"t={e.t:.3f}: host bytes {total} > budget {self.budget} ({e.owner} {e.name})")

    def _phase_start(self, e: Any) -> None:
        if e.phase.value == "synthesis":
            sector = int(re.match(r"s(\d+)p", e.part).group(1))
            self.in_flight[e.part] = self.size_of_sector[sector]

    def _phase_end(self, e: Any) -> None:
        if e.phase.value == "verify" or not e.ok:
            self.in_flight.pop(e.part, None)

    def _partition_done(self, e: Any) -> None:
        self.in_flight.pop(e.part, None)

    def _key_evicted(self, e: Any) -> None:
        busy = sorted(p for p, size in self.in_flight.items() if size == e.log2)
        if busy:
            self.violations.append(f"t={e.t:.3f}: key 2^{e.log2} evicted with {busy} in flight")

    def _key_load(self, e: Any) -> None:
        if e.state == "start":
            if e.log2 in self.loading:
                self.violations.append(f"t={e.t:.3f}: a second load of key 2^{e.log2} at once")
            self.loading.add(e.log2)
        elif e.state == "end":
            self.loading.discard(e.log2)

    def final(self) -> list[str]:
        return self.violations + [f"key 2^{n} load never ended" for n in sorted(self.loading)]

    def of(self, kind: str, **match: Any) -> list[Any]:
        return [e for e in self.events if e.kind == kind and all(getattr(e, k) == v for k, v in match.items())]
