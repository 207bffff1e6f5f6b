"""Re-derive the experiments a recording carries with today's counting rule (issue 42), beside
the figures its runner recorded then (ExperimentEnded's result: the old rule's, a count by
completions over window - lag). No run: the recording's events alone.

    python3 benchmarks/experiment_rederive.py RECORDING [RECORDING ...] [--steps 3/1,4/3] [--json OUT]

For each experiment: each arm's holds, counted, verified/min [95%], the ratio to arm #0 [95%],
the verdict (or why none), then and now. The fold does the counting (prover/fold/tally.py, the
one rule); a partition begun in a hold counts when it finishes later in the recording. Prints a
table an experiment; `--steps A/B,...` adds arm A against arm B of the first experiment (both
held in the same cycles; prover/stats/experiment.py: against); --json writes
{recording: [{name, then, now, steps}]}.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402
from prover.record import read_recording  # noqa: E402
from prover.stats.experiment import against  # noqa: E402


def _ci(ci: Any) -> str:
    return "-" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _arm_line(a: dict[str, Any]) -> str:
    ratio = "-" if a.get("ratio") is None else f"{a['ratio']:.2f}x {_ci(a.get('ratio_ci'))}"
    verdict = a["verdict"] + (f" ({a['why']})" if a.get("why") else "")
    return (f"    #{a['arm']} {a['label'][:42]:<42} holds {a['holds']:>2} counted {a['verified']:>4} "
            f"{a['per_min']:8.1f}/min {_ci(a.get('per_min_ci')):>18}  ratio {ratio:<22} {verdict}")


def rederive(path: Path, steps: list[tuple[int, int]]) -> list[dict[str, Any]]:
    events = read_recording(path).events
    ended = [e.result for e in events if e.kind == "experiment_ended"]  # in order (each attach client numbers from 0)
    st = fold(events)
    out = []
    for i, x in enumerate(summarize(st).experiments):
        doc = {"name": x.name, "hold_s": x.hold_s, "settle_s": x.settle_s, "then": ended[i] if i < len(ended) else None,
               "now": x.result.model_dump(mode="json"), "steps": []}
        if i == 0 and steps:
            counts = [h.count() for h in st.experiments.tally.holds_of(x.experiment)]
            for a, b in steps:
                r = against(counts, x.arms, b).arms[a]
                doc["steps"].append({"arm": a, "base": b, "step": f"{x.arms[a]} / {x.arms[b]}", **r.model_dump(mode="json")})
        out.append(doc)
    return out


def show(path: Path, found: list[dict[str, Any]]) -> None:
    print(f"{path}")
    for x in found:
        print(f"  {x['name']!r} (hold {x['hold_s']:g} s, settle {x['settle_s']:g} s)")
        if x["then"]:
            print("   then (count by completions, exposure = window - lag):")
            for a in x["then"]["arms"]:
                print(_arm_line({**a, "why": None}))
        print("   now (count by GPU section start, the fold's rule):")
        for a in x["now"]["arms"]:
            print(_arm_line(a))
        for n in x["now"]["notes"]:
            print(f"    note: {n}")
        for s in x["steps"]:
            print(f"   step {s['step']}: " + _arm_line(s).strip().split("ratio ", 1)[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recordings", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--steps", default="", help="A/B,...: arm A against arm B of the first experiment")
    a = ap.parse_args(argv)
    steps = [(int(x.split("/")[0]), int(x.split("/")[1])) for x in a.steps.split(",") if x.strip()]
    doc = {}
    for p in a.recordings:
        found = rederive(p, steps)
        show(p, found)
        doc[str(p)] = found
    if a.json is not None:
        a.json.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
