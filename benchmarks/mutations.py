"""Plant each mutation of docs/testing.md's list in a copy of the repository, run the tests that
should catch it, and say whether they did (issue 42: 11 of 29 planted bugs survived the suite).

    python3 benchmarks/mutations.py [--only NAME] [--json benchmarks/results/issue42/mutations.json]

For each mutation: the file copied from this checkout into a scratch copy, the text replaced
(the mutation must apply exactly once: a stale one is an error, not a pass), the named tests
run there with pytest, and the copy restored. Caught: the tests fail with the mutation and
pass without it (both are run). Never touches this checkout.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    name: str  # as docs/testing.md names it
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


M = Mutation
MUTATIONS: tuple[Mutation, ...] = (
    M("switch_pairs --check: no_oom_events cannot fail", "benchmarks/switch_pairs.py",
      'return [f"OOM t={e.t:.2f}', 'return [] and [f"OOM t={e.t:.2f}', ("tests/unit/test_switch_pairs_check.py", "-m", "not slow")),
    M("switch_pairs --check: every_proof_verified cannot fail", "benchmarks/switch_pairs.py",
      "    return bad + ([", "    return [] and bad + ([", ("tests/unit/test_switch_pairs_check.py", "-m", "not slow")),
    M("switch_pairs --check: every_pair_exercised cannot fail", "benchmarks/switch_pairs.py",
      "    return [f\"no proof verified in state", "    return [] and [f\"no proof verified in state",
      ("tests/unit/test_switch_pairs_check.py", "-m", "not slow")),
    M("switch_pairs --check: per_min_ci_present cannot fail", "benchmarks/switch_pairs.py",
      "            if s.get(k) is None]", "            if s.get(k) is None and False]",
      ("tests/unit/test_switch_pairs_check.py", "-m", "not slow")),
    M("switch_pairs --check: no_device_sync_under_reserved_or_stream cannot fail", "benchmarks/switch_pairs.py",
      "            and s[\"device_sync_s\"] > 0]", "            and s[\"device_sync_s\"] > 1e9]",
      ("tests/unit/test_switch_pairs_check.py", "-m", "not slow")),
    M("SETTLE_PROOFS 10 -> 5", "prover/fold/rates.py", "SETTLE_PROOFS = 10", "SETTLE_PROOFS = 5",
      ("tests/unit/test_figure_labels.py",)),
    M("a significant slowdown labelled not significant", "prover/fold/segments.py",
      "ratio_significant=None if rci is None else not rci[0] <= 1.0 <= rci[1]",
      "ratio_significant=None if rci is None else rci[0] > 1.0", ("tests/unit/test_figure_labels.py",)),
    M("the n > 400 Poisson upper end off (sqrt(n) for sqrt(n + 1))", "prover/stats/intervals.py",
      "(math.sqrt(n + 1) + z / 2) ** 2", "(math.sqrt(n) + z / 2) ** 2",
      ("tests/experiment/test_stats.py::test_both_ends_above_the_exact_range_agree_with_the_exact_interval",)),
    M("tune adopts a race's leader without significance", "prover/experiment/tune.py",
      'adopted = leader != 0 and (_value(arms[0], knob) in dropped or r.verdict == "faster")',
      "adopted = leader != 0", ("tests/experiment/test_tune.py::test_a_leader_is_adopted_only_when_significantly_faster_than_the_incumbent",)),
    M("the screen's fallback window 600 -> 660 s", "prover/observe/screen.py",
      '"fallbacks_per_min": _per_min(o, "fallback", window("fallbacks_per_min"), now)',
      '"fallbacks_per_min": _per_min(o, "fallback", 660.0, now)', ("tests/observe/test_screen_windows.py",)),
    M("the screen's for: 10% late", "prover/observe/screen.py", "    return r.for_s\n", "    return r.for_s * 1.1\n",
      ("tests/observe/test_screen_windows.py",)),
    M("the engine calls every OOM failed", "prover/pipeline/partition.py",
      '**exc.event("failed" if last else "retried")', '**exc.event("failed")',
      ("tests/pipeline/test_oom_outcome.py",)),
    M("the VRAM-growth warm-up skip removed", "prover/health/vram_growth.py",
      "        if self.marks > self.warmup:", "        if True:",
      ("tests/health/test_vram_growth.py::test_the_warm_up_skips_the_pool_filling_up_and_no_more",)),
    M("the VRAM-growth guard on Sen's interval removed", "prover/health/vram_growth.py",
      "now = tr.p < self.alpha and tr.low > 0 and grown >= self.min_growth",
      "now = tr.p < self.alpha and grown >= self.min_growth",
      ("tests/health/test_vram_growth.py::test_a_series_whose_slope_interval_reaches_zero_is_not_a_leak",)),
    M("the VRAM-growth guard on min_growth removed", "prover/health/vram_growth.py",
      "now = tr.p < self.alpha and tr.low > 0 and grown >= self.min_growth",
      "now = tr.p < self.alpha and tr.low > 0",
      ("tests/health/test_vram_growth.py::test_a_rise_smaller_than_min_growth_is_not_a_leak",)),
    M("the health row hides other processes on the card", "c2tui/widgets/health_panel.py",
      "procs = [p for p in h.procs if p.bytes is not None]", "procs = [p for p in h.procs if p.bytes is not None and p.mine]",
      ("tests/tui/test_health_row.py",)),
    # issue 42's own defects, planted back
    M("the tally drops a partition that finishes after its hold", "prover/fold/tally.py",
      "    st, h = got\n    if not e.ok:", "    st, h = got\n    if h.t1 is not None and e.t > h.t1:\n        return\n    if not e.ok:",
      ("tests/experiment/test_tally.py",)),
    M("a cycle in which every arm counted 0 is paired", "prover/stats/experiment.py",
      "ratio, rci, n = paired_ratio(by_arm[0], by_arm[i], level, skip=empty)",
      "ratio, rci, n = paired_ratio(by_arm[0], by_arm[i], level)",
      ("tests/experiment/test_stats.py::test_a_cycle_in_which_every_arm_counted_nothing_is_not_paired",)),
    M("a ratio drawn against an arm that counted nothing", "prover/stats/experiment.py",
      "    if hs and sum(h.verified for h in hs) == 0:", "    if False:",
      ("tests/experiment/test_stats.py::test_no_ratio_is_drawn_against_an_arm_that_counted_nothing",)),
)


def run_tests(copy: Path, tests: tuple[str, ...]) -> tuple[bool, str]:
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "-x", *tests],
                       cwd=copy, capture_output=True, text=True, timeout=900)
    tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
    return r.returncode == 0, tail[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="c2tui-mut-"))
    copy = scratch / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.pyc", ".cache"))
    rows = []
    try:
        for m in MUTATIONS:
            if a.only and a.only not in m.name:
                continue
            target = copy / m.path
            text = target.read_text()
            if text.count(m.old) != 1:
                rows.append({**asdict(m), "caught": None, "error": f"the text to mutate occurs {text.count(m.old)} times"})
                print(f"STALE   {m.name}: {rows[-1]['error']}", flush=True)
                continue
            t0 = time.monotonic()
            clean_ok, clean_tail = run_tests(copy, m.tests)
            target.write_text(text.replace(m.old, m.new))
            try:
                mut_ok, mut_tail = run_tests(copy, m.tests)
            finally:
                target.write_text(text)
            caught = clean_ok and not mut_ok
            rows.append({**asdict(m), "caught": caught, "clean": clean_tail, "mutated": mut_tail,
                         "seconds": round(time.monotonic() - t0, 1)})
            print(f"{'CAUGHT ' if caught else 'MISSED '} {m.name}: clean {clean_tail!r}; mutated {mut_tail!r}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if a.json is not None:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"when": time.strftime("%Y-%m-%d %H:%M:%S"), "mutations": rows}, indent=1))
    missed = [r["name"] for r in rows if not r["caught"]]
    print(f"{len(rows) - len(missed)} of {len(rows)} caught" + (f"; missed: {missed}" if missed else ""))
    return 0 if not missed else 1


if __name__ == "__main__":
    raise SystemExit(main())
