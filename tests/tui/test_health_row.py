"""The health row names every process holding memory on the card, not only this prover (issue
42: a row hiding the others survived the suite). From NVML (a fake module) through the event
and the fold to the row's text."""
from __future__ import annotations

from types import SimpleNamespace

import themes
from c2tui.widgets.health_panel import render_health
from prover import events as ev
from prover.fold.apply import fold
from prover.health import gpu
from tests.health.fake_nvml import FakeNvml

PAL = themes.load("dark").palette
START = ev.RunStarted(t=0.0, backend="cuda", simulated=False, profile="native", proved_log2=22, modelled_log2=22,
                      gpus=1, config={})


def _row(procs: list[SimpleNamespace], tmp_path, names: dict[int, str]) -> str:
    for pid, name in names.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_text(name + "\n")
    got = gpu.read(FakeNvml(procs=procs), object(), my_pid=100, proc=tmp_path)
    st = fold([START, ev.GpuHealth(t=1.0, gpu=0, **got)])
    (line,) = [ln.plain for ln in render_health(st, PAL, 220, 5) if ln.plain.startswith("GPU0")]
    return line


def test_other_processes_on_the_card_are_named_with_their_memory(tmp_path) -> None:
    line = _row([SimpleNamespace(pid=100, usedGpuMemory=80 << 30), SimpleNamespace(pid=200, usedGpuMemory=6 << 30),
                 SimpleNamespace(pid=300, usedGpuMemory=2 << 30)], tmp_path, {100: "c2tui", 200: "python3"})
    assert "mine 80" in line
    assert "python3 6" in line and "pid 300 2" in line, line  # a name where /proc has one, else its pid


def test_a_foreign_process_is_shown_even_when_it_holds_more_than_this_prover(tmp_path) -> None:
    line = _row([SimpleNamespace(pid=100, usedGpuMemory=1 << 30), SimpleNamespace(pid=200, usedGpuMemory=70 << 30)],
                tmp_path, {200: "trainer"})
    assert "mine 1" in line and "trainer 70" in line, line
