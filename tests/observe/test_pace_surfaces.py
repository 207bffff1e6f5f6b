"""What sets the pace, said the same on every surface (prover/fold/pace.py): the metrics, the
status report (and its text), the summary (and its text) of a native 2^27 recording that was
host-bound on synthesis, and of a native 2^22 one the GPU bounded."""
from __future__ import annotations

import io
from pathlib import Path

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console

from c2tui.commands import status as status_cmd
from c2tui.text.summary import render
from prover import status_of
from prover.fold.apply import fold
from prover.fold.summary import summarize
from prover.observe.metrics import MetricsExporter
from prover.record import read_recording

H200 = Path(__file__).resolve().parents[2] / "benchmarks" / "recordings" / "h200"
N27 = H200 / "scale27" / "n27_narrow_24g.jsonl.gz"
N22 = H200 / "native" / "n22_stream_card.jsonl.gz"


def _events(path: Path, until: float | None = None) -> list:
    return [e for e in read_recording(path).events if until is None or e.t <= until]


def _scrape(events: list) -> dict:
    exp = MetricsExporter()
    for e in events:
        exp.sink(e)
    out: dict = {}
    for fam in text_string_to_metric_families(generate_latest(exp.registry).decode()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _text(renderable) -> str:
    c = Console(file=io.StringIO(), width=300, color_system=None)
    c.print(renderable)
    return c.file.getvalue()


def test_metrics_say_the_bound_and_the_busy_share():
    evs = _events(N27, until=50.0)
    m = _scrape(evs)
    p = fold(evs).pace.readout(0, evs[-1].t)
    native = (("simulated", "false"),)  # every series says native or simulated
    assert m[("c2tui_pace_bound", (("bound", "host"), ("gpu", "0"), *native, ("what", "synthesis")))] == 1.0
    assert sum(v for (n, _), v in m.items() if n == "c2tui_pace_bound") == 1.0  # one verdict a GPU
    assert m[("c2tui_gpu_busy_share", (("gpu", "0"), *native))] == p.compute_share < 0.5
    assert m[("c2tui_gpu_kernel_share", (("gpu", "0"), *native))] == p.kernel_share
    assert m[("c2tui_pace_worker_share", (("activity", "synthesis"), ("gpu", "0"), *native))] == p.shares["synthesis"]
    assert m[("c2tui_pace_host_cores_busy_share", native)] == p.cores_busy


def test_status_and_summary_say_it_in_words():
    s = fold(_events(N27, until=50.0))
    report = status_of(s)
    assert report.gpus[0].pace is not None and report.gpus[0].pace.what == "synthesis"
    text = _text(status_cmd._render(report))
    assert "pace gpu0: host-bound: synthesis" in text and "host_threads may help" in text
    sm = summarize(fold(_events(N27)))
    assert sm.gpus[0].pace is not None and (sm.gpus[0].pace.bound, sm.gpus[0].pace.what) == ("host", "synthesis")
    assert "pace gpu0 over the run: host-bound: synthesis" in _text(render(sm))
    assert summarize(fold(_events(N22))).gpus[0].pace.bound == "gpu"
