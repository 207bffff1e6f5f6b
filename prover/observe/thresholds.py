"""The alert thresholds, defined once: docs/alerts/c2tui.rules.yml is generated from here
(prover/observe/alert_rules.py; a test compares the committed file with a fresh one) and the
screen judges its figures with the same numbers (`judge`: figures -> ok / amber / red + why).

A `Figure` is one measured quantity: its PromQL over the exporter's metrics, and what the
screen computes for it from the fold (the same window where a window is named). A `Rule` is
an alert: a level (amber = severity warning, red = critical) and conditions on figures, any
of which fires it. An amber rule and a red rule on one figure share the alert's name (the
severity label tells them apart), and the amber one stops where the red one starts, so one
alert fires at a time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal, Mapping

Level = Literal["ok", "amber", "red"]
SEVERITY = {"amber": "warning", "red": "critical"}
ORDER = {"ok": 0, "amber": 1, "red": 2}
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0}


def duration_s(text: str) -> float:
    """A Prometheus duration as the rules write them ("5m", "1m", "30s", "1h") in seconds (0: "")."""
    if not text:
        return 0.0
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smh])", text)
    if m is None:
        raise ValueError(f"not a duration this file writes: {text!r}")
    return float(m.group(1)) * _UNIT_S[m.group(2)]


@dataclass(frozen=True)
class Figure:
    name: str
    promql: str  # over the exporter's metrics (its labels: gpu, lock, ... as the metric has them)
    words: str  # how the screen says it
    unit: str = ""
    screen: str = ""  # what the screen computes from the fold, where it is not the same metric

    @property
    def window_s(self) -> float | None:
        """The range its PromQL looks back over (`[10m]`: 600), which the screen uses for the same
        figure; None for an instant figure. One range a figure: a second, different one is an error."""
        ranges = {duration_s(r) for r in re.findall(r"\[(\d+(?:\.\d+)?[smh])\]", self.promql)}
        if len(ranges) > 1:
            raise ValueError(f"{self.name}: its PromQL looks back over {len(ranges)} ranges")
        return ranges.pop() if ranges else None

    def show(self, v: float) -> str:
        if self.unit.startswith("bytes"):
            return f"{v / 2**20:.0f} MiB{self.unit[5:]}"
        if self.unit == "%":
            return f"{v:.0%}"
        if self.unit == "s":
            return f"{v:.0f} s"
        return f"{rounded(v)}{self.unit}"


def rounded(v: float) -> str:
    """A figure as a badge says it: whole numbers whole, one decimal from 1 up, two significant
    digits below ("fallbacks 4.0/min", not 4.04823)."""
    if v == int(v):
        return f"{int(v)}"
    return f"{v:.1f}" if abs(v) >= 1 else f"{v:.2g}"


@dataclass(frozen=True)
class Cond:
    figure: str
    op: Literal[">", "<"]
    value: float

    def met(self, v: float | None) -> bool:
        return v is not None and (v > self.value if self.op == ">" else v < self.value)


@dataclass(frozen=True)
class Rule:
    alert: str
    level: Literal["amber", "red"]
    conds: tuple[Cond, ...]
    summary: str
    description: str = ""
    for_: str = ""
    guard: str = ""  # PromQL `and` clause that keeps a rule quiet where the figure means nothing (a 0 budget)
    unless: Cond | None = None  # amber: quiet where its red twin fires (filled in by `_pair`)

    @property
    def for_s(self) -> float:
        """Its `for:` in seconds, as Prometheus reads it (0: none)."""
        return duration_s(self.for_)


FIGURES: dict[str, Figure] = {f.name: f for f in (
    Figure("fallback_share", "sum without(gpu) (rate(c2tui_fallbacks_total[10m])) / sum without(gpu, outcome) "
           "(rate(c2tui_partitions_total[10m]))", "partitions falling back", "%",
           "fallbacks / partitions finished over the last 10 min"),
    Figure("fallbacks_per_min", "sum without(gpu) (rate(c2tui_fallbacks_total[10m])) * 60", "fallbacks", "/min",
           "fallbacks over the last 10 min, per minute"),
    Figure("proofs_failed", 'increase(c2tui_proofs_total{outcome="failed"}[15m])', "failed proofs (15 min)"),
    Figure("ooms_failed", 'increase(c2tui_ooms_total{outcome="failed"}[15m])', "OOMs that failed a partition (15 min)"),
    Figure("ooms_retried_per_min", 'sum without(gpu, outcome) (rate(c2tui_ooms_total{outcome="retried"}[10m])) * 60',
           "OOMs retried", "/min", "OOMs with outcome retried over the last 10 min, per minute"),
    Figure("ooms_switch", 'increase(c2tui_ooms_total{cause="switch"}[15m])', "OOMs after a live switch (15 min)"),
    Figure("ooms_budget", 'increase(c2tui_ooms_total{cause="budget"}[15m])', "OOMs under a cut budget (15 min)"),
    Figure("ooms_unexplained", 'increase(c2tui_ooms_total{cause=~"leak|contention|device|unknown"}[15m])',
           "OOMs no switch or budget explains (15 min)"),
    Figure("device_sync_share", "rate(c2tui_device_sync_seconds_sum[5m])", "time in device syncs", "%",
           "device-sync seconds over the last 5 min / 300"),
    Figure("device_sync_wait_s", "c2tui_device_sync_wait_seconds", "one device sync waiting", "s"),
    Figure("lock_held_s", "c2tui_lock_held_seconds", "lock held", "s", "now - the holder's acquire, per lock"),
    Figure("gpu_progress_age_s", "c2tui_gpu_progress_age_seconds", "no GPU phase ended for", "s",
           "seconds since a GPU phase last ended on the GPU while one runs there (0: none runs)"),
    Figure("stalls", "increase(c2tui_stalls_total[10m])", "watchdog stalls (10 min)"),
    Figure("vram_growth", "c2tui_vram_growth_bytes_per_partition", "VRAM growing", "bytes/partition",
           "the slope of a series VramGrowth says is growing (0 once cleared)"),
    Figure("vram_partitions_left", "c2tui_vram_growth_partitions_left", "partitions until the budget at that growth"),
    Figure("vram_live_share", "sum without(buffer) (c2tui_vram_live_bytes) / c2tui_vram_budget_bytes",
           "live VRAM of the budget", "%"),
    Figure("host_ram_share", "sum without(owner) (c2tui_host_ram_bytes) / c2tui_host_ram_budget_bytes",
           "host RAM of its budget", "%"),
    Figure("host_ram_waiting", "rate(c2tui_host_ram_wait_seconds_total[10m])", "workers waiting for host RAM",
           "", "host-RAM wait seconds over the last 10 min / 600 (the mean number of workers held back)"),
    Figure("deadlines_missed", "increase(c2tui_deadlines_missed_total[15m])", "deadlines missed (15 min)"),
    Figure("sectors_overdue", "c2tui_sectors_overdue", "sectors past their deadline"),
)}

_RULES: tuple[Rule, ...] = (
    Rule("C2tuiFallbackCollapse", "red", (Cond("fallback_share", ">", 0.5),), for_="5m",
         # the seed's collapse: most partitions take the slow fallback path (no pre-stage room)
         summary="{{ $value | humanizePercentage }} of partitions fall back on {{ $labels.instance }}",
         description="Pre-stage finds no room; see the mem lock and mem_sync (device sync + trim serialises two-lock)."),
    Rule("C2tuiFallbacks", "amber", (Cond("fallbacks_per_min", ">", 1.0),), for_="5m",
         summary="{{ $value | humanize }} fallbacks a minute on {{ $labels.instance }}",
         description="Partitions pre-stage under compute (slow path); see the VRAM budget and mem_sync."),
    Rule("C2tuiProofFailed", "red", (Cond("proofs_failed", ">", 0),),
         summary="proof failed verification on gpu {{ $labels.gpu }} ({{ $labels.instance }})",
         description="{{ $value }} failed proof(s) in 15 min; c2tui summary lists the partitions."),
    Rule("C2tuiOomFailed", "red", (Cond("ooms_failed", ">", 0),),
         summary="an OOM failed a partition on gpu {{ $labels.gpu }} ({{ $labels.instance }})",
         description="{{ $value }} in 15 min after the GPU section's retries; see VRAM growth and the budget."),
    Rule("C2tuiOomRetried", "amber", (Cond("ooms_retried_per_min", ">", 1.0),), for_="5m",
         summary="{{ $value | humanize }} OOMs a minute retried on {{ $labels.instance }}",
         description="Partitions found no room and went on (fallback or a retry); they lose time each time."),
    # by cause (docs/disciplines.md, "An OOM that still happens"); injected OOMs (fault injection) never fire
    Rule("C2tuiOomFromSwitch", "amber", (Cond("ooms_switch", ">", 0),),
         summary="OOM after a live switch on gpu {{ $labels.gpu }} ({{ $labels.instance }})",
         description="The room was held by a section begun under other knobs; the partition was retried. "
                     "The Note in the event log names the holders."),
    Rule("C2tuiOomBudget", "amber", (Cond("ooms_budget", ">", 0),),
         summary="OOM on gpu {{ $labels.gpu }}: the VRAM budget is below what was held ({{ $labels.instance }})",
         description="Check vram_budget (a cut applies once the sections admitted under the old budget have left)."),
    Rule("C2tuiOomUnexplained", "red", (Cond("ooms_unexplained", ">", 0),),
         summary="OOM on gpu {{ $labels.gpu }} ({{ $labels.cause }}) on {{ $labels.instance }}",
         description="No switch or budget change explains it: c2tui summary lists the OOMs, the event log names "
                     "whose memory it was."),
    Rule("C2tuiMemBehindDeviceSync", "amber", (Cond("device_sync_share", ">", 0.2), Cond("device_sync_wait_s", ">", 10)),
         for_="5m", summary="mem lock on gpu {{ $labels.gpu }} stuck behind device-global syncs",
         description="mem_sync=device: the mem holder waits for every kernel on the GPU (its waiters with it); "
                     "try mem_sync=stream."),
    Rule("C2tuiLockStalled", "amber", (Cond("lock_held_s", ">", 120),), for_="1m",
         summary="{{ $labels.lock }} lock on gpu {{ $labels.gpu }} held {{ $value | humanizeDuration }}",
         description="c2tui status / attach names the holder and its partition."),
    Rule("C2tuiLockStalled", "red", (Cond("lock_held_s", ">", 300),), for_="1m",
         summary="{{ $labels.lock }} lock on gpu {{ $labels.gpu }} held {{ $value | humanizeDuration }}",
         description="c2tui status / attach names the holder and its partition."),
    Rule("C2tuiGpuStalled", "amber", (Cond("gpu_progress_age_s", ">", 120),), for_="1m",
         summary="gpu {{ $labels.gpu }}: no GPU phase ended for {{ $value | humanizeDuration }}",
         description="A kernel, an upload or a device sync does not finish; c2tui status names what runs there."),
    Rule("C2tuiGpuStalled", "red", (Cond("gpu_progress_age_s", ">", 600),), for_="1m",
         summary="gpu {{ $labels.gpu }}: no GPU phase ended for {{ $value | humanizeDuration }}",
         description="A kernel, an upload or a device sync does not finish; c2tui status names what runs there."),
    Rule("C2tuiWatchdogStall", "amber", (Cond("stalls", ">", 0),),
         summary="watchdog stall ({{ $labels.what }}) on gpu {{ $labels.gpu }}"),
    Rule("C2tuiVramGrowing", "amber", (Cond("vram_growth", ">", 0),),
         summary="gpu {{ $labels.gpu }}: VRAM of {{ $labels.owner }} grows {{ $value | humanize1024 }}B a partition",
         description="Mann-Kendall trend over the last partitions' VRAM marks (docs/alerts.md): a leak, or a pool "
                     "that keeps growing; the owner is named."),
    Rule("C2tuiVramGrowing", "red", (Cond("vram_partitions_left", "<", 20),),
         summary="gpu {{ $labels.gpu }}: VRAM growth reaches the budget in {{ $value | humanize }} partitions",
         description="Out-of-memory errors follow within minutes at this rate; restart the worker or the run."),
    Rule("C2tuiVramNearBudget", "amber", (Cond("vram_live_share", ">", 0.95),), for_="10m",
         guard="c2tui_vram_budget_bytes > 0",
         summary="gpu {{ $labels.gpu }} live VRAM at {{ $value | humanizePercentage }} of its budget"),
    Rule("C2tuiHostRamNearBudget", "amber", (Cond("host_ram_share", ">", 0.95),), for_="10m",
         guard="c2tui_host_ram_budget_bytes > 0",
         summary="host RAM at {{ $value | humanizePercentage }} of its budget on {{ $labels.instance }}",
         description="c2tui_host_ram_waiters workers wait for room; raise host_ram_budget or lower workers_per_gpu."),
    Rule("C2tuiHostRamWaits", "amber", (Cond("host_ram_waiting", ">", 0.25),), for_="10m",
         summary="{{ $value | printf \"%.1f\" }} workers on average held back for host RAM on {{ $labels.instance }}",
         description="Their partitions wait before synthesis; raise host_ram_budget or lower workers_per_gpu."),
    Rule("C2tuiHostRamWaits", "red", (Cond("host_ram_waiting", ">", 1.0),), for_="10m",
         summary="{{ $value | printf \"%.1f\" }} workers on average held back for host RAM on {{ $labels.instance }}",
         description="Their partitions wait before synthesis; raise host_ram_budget or lower workers_per_gpu."),
    Rule("C2tuiDeadlineMissed", "red", (Cond("deadlines_missed", ">", 0), Cond("sectors_overdue", ">", 0)),
         summary="a {{ $labels.class }} sector missed its deadline on {{ $labels.instance }}",
         description="Higher classes are served first at a partition boundary; check cordoned GPUs, pauses and "
                     "the host-RAM budget."),
)


def _pair(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """An amber rule whose red twin (same alert) judges the same single figure stops where it starts."""
    out = []
    for r in rules:
        twin = next((x for x in rules if x.alert == r.alert and x.level == "red"), None)
        if r.level == "amber" and twin is not None and len(r.conds) == len(twin.conds) == 1 \
                and r.conds[0].figure == twin.conds[0].figure:
            r = Rule(**{**r.__dict__, "unless": twin.conds[0]})
        out.append(r)
    return tuple(out)


RULES: tuple[Rule, ...] = _pair(_RULES)


@dataclass(frozen=True)
class Verdict:
    level: Level
    reason: str  # e.g. "fallbacks 3.2/min > 1/min"
    alert: str = ""


def _why(c: Cond, v: float) -> str:
    f = FIGURES[c.figure]
    return f"{f.words} {f.show(v)} {c.op} {f.show(c.value)}"


def judge(figures: Mapping[str, float | None], rules: Iterable[Rule] = RULES) -> list[Verdict]:
    """Every rule the figures meet (figures absent or None are not judged), worst first."""
    out = []
    for r in rules:
        met = [c for c in r.conds if c.met(figures.get(c.figure))]
        if not met or (r.unless is not None and r.unless.met(figures.get(r.unless.figure))):
            continue
        out.append(Verdict(r.level, "; ".join(_why(c, float(figures[c.figure])) for c in met), r.alert))  # type: ignore[arg-type]
    return sorted(out, key=lambda v: -ORDER[v.level])


def worst(figures: Mapping[str, float | None], rules: Iterable[Rule] = RULES) -> Verdict:
    """The one level a header or panel shows, with its reason (ok: nothing met)."""
    got = judge(figures, rules)
    return got[0] if got else Verdict("ok", "")


def rules_on(names: Iterable[str]) -> tuple[Rule, ...]:
    """The rules judging only the figures `names` (a panel's own: e.g. a GPU panel's)."""
    want = set(names)
    return tuple(r for r in RULES if {c.figure for c in r.conds} <= want)
