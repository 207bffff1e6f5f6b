"""Issue 44: the reader checks inside values (lists, maps, nested models) and free-form targets
against the same bounds as the top-level fields, and the GPUs the run has; the renderers never
assume it. Each recording below was accepted and crashed a renderer (or was taken silently)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from prover import bounds
from prover import events as ev
from prover.fold.apply import fold
from prover.fold.summary import summarize
from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
BASE = (ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl").read_text().splitlines()  # a 2-GPU run
END = '{"t":19.5,"kind":"run_ended","reason":"done"}'

EXPERIMENT = ['{"t":18.91,"kind":"experiment_started","experiment":0,"arms":["a","b","c"],"knobs":[{"lock_mode":"single"}],'
              '"design":"abab","cycles":1,"hold_s":1.0,"settle_s":0.0}',
              '{"t":18.92,"kind":"hold_started","experiment":0,"hold":0,"arm":2,"cycle":0,"hold_s":1.0,"settle_s":0.0}',
              '{"t":18.95,"kind":"hold_ended","experiment":0,"hold":0,"arm":2,"cycle":0,"complete":true}',
              '{"t":18.96,"kind":"experiment_ended","experiment":0,"reason":"done","result":{}}']
CASES = {  # name: (lines added before the run's end, words of the reader's error)
    "huge in a host-health list": (['{"t":18.9,"kind":"host_health","cpu_busy":[1e308,0.5]}'], "cpu_busy[0]=1e+308 is outside 0..1"),
    "NaN in a host-health list": (['{"t":18.9,"kind":"host_health","cpu_busy":[NaN,0.5]}'], "cpu_busy[0]=nan"),
    "a cordon of a partition": (['{"t":18.9,"kind":"job_action","action":"cordon","target":"s3p1","source":"x"}'],
                                "its target must name a GPU"),
    "arms and knobs of different lengths": (EXPERIMENT, "names 3 arms but gives knobs for 1"),
    "health of gpu255 in a 2-GPU run": (['{"t":18.9,"kind":"gpu_health","gpu":255,"temp_c":50.0}'],
                                        "gpu255 is not one of the run's GPUs (gpu0..gpu1)"),
    "a cordon of gpu9 in a 2-GPU run": (['{"t":18.9,"kind":"job_action","action":"cordon","target":"gpu9","source":"x"}'],
                                        "gpu9 is not one of the run's GPUs"),
    "a duplicate gpu key": (['{"t":18.9,"kind":"gpu_health","gpu":0,"gpu":1,"temp_c":50.0}'], "'gpu' is given twice"),
    "a duplicate key, escaped": (['{"t":18.9,"kind":"gpu_health","gpu":0,"g\\u0070u":1,"temp_c":50.0}'], "'gpu' is given twice"),
    "overlapping host_joined": (['{"t":18.9,"host":"h0","kind":"host_joined","node":"a","gpus":2,"gpu_offset":0}',
                                 '{"t":18.91,"host":"h1","kind":"host_joined","node":"b","gpus":2,"gpu_offset":1}'],
                                "h1's gpu1..gpu2 overlaps h0's gpu0..gpu1"),
    "a huge byte count in a map": (['{"t":18.9,"kind":"vram_mark","gpu":0,"part":"s0p0","worker":"g0w0","live":1,"cached":1,'
                                    '"owners":{"g0w0":1' + "0" * 30 + '}}'], "owners['g0w0']"),
    "a long name in a list": (['{"t":18.9,"host":"h0","kind":"host_left","reason":"x","requeued":["' + "p" * 200 + '"]}'],
                              "requeued[0] is 200 characters long"),
    "a NaN in a run's config": (['{"t":18.9,"kind":"note","level":"info","text":"x"}'], None),  # (a control: fine)
}


def _rec(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join([*BASE[:-1], *lines, END]) + "\n")
    return p


@pytest.mark.parametrize("name", list(CASES))
def test_the_reader_refuses_what_the_renderers_could_not_take(tmp_path: Path, name: str) -> None:
    lines, words = CASES[name]
    rec = read_recording(_rec(tmp_path, lines))
    if words is None:
        assert rec.error is None
        return
    assert rec.error is not None and words in rec.error, rec.error
    assert rec.bad_line == len(BASE) + next(i for i, x in enumerate(lines) if words and _bad(x, lines))


def _bad(x: str, lines: list[str]) -> bool:  # the line the reader stopped at: the last one for the pairs above
    return x == lines[-1] if len(lines) > 1 and "host_joined" in x else x == lines[0]


def test_run_gpus_know_a_fleet_and_let_a_host_rejoin() -> None:
    g = bounds.RunGpus()
    assert g.problem(ev.RunStarted(t=0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=8, gpus=0)) is None
    assert g.problem(ev.GpuHealth(t=0.1, gpu=0)) is not None  # no host yet
    assert g.problem(ev.HostJoined(t=0.2, host="h0", node="a", gpus=2, gpu_offset=0)) is None
    assert g.problem(ev.HostJoined(t=0.3, host="h1", node="b", gpus=2, gpu_offset=2)) is None
    assert g.problem(ev.GpuHealth(t=0.4, gpu=3)) is None
    assert g.problem(ev.HostLeft(t=0.5, host="h1", reason="lost", lost=True)) is None
    assert g.problem(ev.HostJoined(t=0.6, host="h2", node="c", gpus=2, gpu_offset=2)) is None  # h1's place, h1 gone
    assert "gpu4" in (g.problem(ev.QueueWait(t=0.7, proof_class="c2", waiting=1, reason="x", gpus=[0, 4])) or "")


def test_a_duplicate_key_is_found_wherever_it_hides() -> None:
    def dup(line: bytes) -> str | None:
        try:
            e = ev.parse_event(line)
        except ValueError:
            e = None
        return bounds.duplicate_key(line, e)

    assert dup(b'{"t":1.0,"kind":"note","level":"info","text":"say \\"t\\": 2"}\n') is None  # a colon in a text
    assert dup(b'{"t":1.0,"kind":"vram_mark","gpu":0,"part":"p","worker":"w","live":1,"cached":1,'
               b'"owners":{"a":1,"b":2}}\n') is None  # a map's keys counted
    assert dup(b'{"t":1.0,"kind":"note","level":"info","text":"x","t":2.0}\n') is not None
    assert dup(b'{"t":1.0,"kind":"gpu_health","gpu":0,"gpu" :255}\n') is not None  # a spaced colon
    assert dup(b'{"t":1.0,"kind":"vram_mark","gpu":0,"part":"p","worker":"w","live":1,"cached":1,'
               b'"owners":{"a":1,"a":2}}\n') is not None  # inside a map


def _events(lines: list[str]) -> list:
    """The events as a peer could hand them over, past no reader's check."""
    return [ev.parse_event(x) for x in [*BASE[1:-1], *lines, END]]


@pytest.mark.parametrize("name", ["huge in a host-health list", "NaN in a host-health list", "a cordon of a partition",
                                  "arms and knobs of different lengths", "health of gpu255 in a 2-GPU run"])
def test_the_renderers_never_assume_the_reader(name: str) -> None:
    from c2tui.text.summary import render
    from c2tui.widgets.health_panel import host_line
    from c2tui.widgets.common import sparkline

    import asyncio
    from types import SimpleNamespace

    from c2tui.commands.screenshot import render_svg

    events = _events(CASES[name][0])
    st = fold(events)
    Console(file=io.StringIO(), width=140).print(render(summarize(st)))
    from c2tui.text.compare import CompareView
    from prover.fold.compare import compare

    Console(file=io.StringIO(), width=140).print(CompareView(compare([("a", events), ("b", events)])))
    svg = asyncio.run(render_svg("x.jsonl", 19.0, (120, 40), "dark", rec=SimpleNamespace(events=events, header=None)))
    assert "<svg" in svg
    assert sparkline([float("nan"), float("inf"), 1e308, -5.0, 0.5], 8) == "  █▁▄"
    health = getattr(getattr(st, "ops", None), "host", None)
    if health is not None:
        host_line(health, {"dim": "", "ntt_h": "", "warn": "", "ok": ""}, 80)
