"""`c2tui status` as text (issue 36): the knobs named (discipline, mem_sync, budgets as sizes,
placement), whole GPU names at 140 columns however long, `--watch N` redrawing in place with
rich Live (no screen clearing), and Ctrl-C leaving with 3."""
from __future__ import annotations

import io
import threading

import pytest
from click.testing import CliRunner
from rich.console import Console

from c2tui.commands import status as st
from prover import DashboardState, events as ev, status_of

LONG = "NVIDIA GeForce RTX 5070 Ti Laptop GPU with a very long board name"


def _state(name: str = LONG) -> DashboardState:
    s = DashboardState()
    cfg = {"lock_mode": "two-lock", "mem_sync": "stream", "workers_per_gpu": 3, "prestage": True, "b_g2": "cpu",
           "vram_budget": 16 << 30, "host_ram_budget": 0, "paused": False, "class_gpus": "winning=1"}
    for e in (ev.RunStarted(t=0, backend="sim", simulated=True, profile="tiny", proved_log2=10, modelled_log2=20, gpus=2,
                            config=cfg),
              ev.GpuInfo(t=0, gpu=0, name=name, total_bytes=16 << 30, budget_bytes=16 << 30, simulated=True),
              ev.GpuInfo(t=0, gpu=1, name="H200", total_bytes=16 << 30, budget_bytes=16 << 30, simulated=True)):
        s.apply(e)
    return s


def _text(width: int = 140) -> str:
    c = Console(width=width, record=True, color_system=None)
    c.print(st._render(status_of(_state())))
    return c.export_text()


def test_the_knobs_are_named_in_text():
    text = " ".join(_text().split())  # the line wraps where the terminal does
    line = text[text.index("knobs: "):text.index("per GPU")]
    for part in ("lock_mode two-lock", "mem_sync stream", "workers_per_gpu 3", "prestage on", "b_g2 cpu",
                 "vram_budget 16 GiB", "host_ram_budget off", "class_gpus winning=1", "paused off"):
        assert part in line, line


def test_a_long_gpu_name_is_whole_at_140_columns():
    text = _text(140)
    assert LONG in text and "…" not in text.split("knobs:")[1], text


def test_watch_redraws_in_place_and_stops_when_the_stream_ends(monkeypatch):
    s, lock, ended = _state(), threading.Lock(), threading.Event()
    out = io.StringIO()
    monkeypatch.setattr(st, "_console", lambda: Console(file=out, force_terminal=True, width=140, color_system=None))
    frames = []
    real = st._report

    def report(state, lk, dropped):
        frames.append(1)
        if len(frames) == 3:
            ended.set()  # the run's stream ends after a few frames
        return real(state, lk, dropped)

    monkeypatch.setattr(st, "_report", report)
    last = st._watch(s, lock, 0, 0.1, ended, as_json=False, heard=st.Heard())
    raw = out.getvalue()
    assert last.backend == "sim" and len(frames) >= 3
    assert "\x1b[2J" not in raw and "\x1b[H" not in raw  # never a cleared screen: no flicker
    assert raw.count("\x1b[1A") + raw.count("\x1b[2K") > 0  # the next frame goes over the last
    assert "the run's stream ended" in raw


def test_ctrl_c_leaves_with_3_and_a_bad_watch_is_refused(monkeypatch):
    class Client:
        live = True

        def __init__(self, *a, **k):
            pass

        def connect(self):
            return type("W", (), {"history_dropped": 0})()

        def start(self, on_event, on_end):
            pass

        def close(self):
            pass

    import prover

    monkeypatch.setattr(prover, "AttachClient", Client, raising=False)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(st, "_watch", interrupted)
    r = CliRunner().invoke(st.command, ["x.sock", "--watch", "1"])
    assert r.exit_code == 3, r.output
    bad = CliRunner().invoke(st.command, ["x.sock", "--watch", "nan"])
    assert bad.exit_code == 2 and "--watch" in bad.output
