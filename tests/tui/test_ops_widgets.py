"""The operators' console widgets drawn from a fold (issue 36): why a class waits in the queue
row, the host-RAM bar's threshold and why, the health row only from what was read."""
from __future__ import annotations

from pathlib import Path

import themes
from c2tui.widgets.health_panel import render_health
from c2tui.widgets.queue_bar import render_queues
from prover import events as ev
from prover.fold.apply import fold
from prover.observe import screen
from prover.record import read_recording

PAL = themes.load("dark").palette
SCALE27 = Path(__file__).parents[2] / "benchmarks" / "recordings" / "h200" / "scale27" / "n27_stream_card.jsonl.gz"
START = ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8, gpus=2,
                      config={})


def test_the_queue_row_says_why_a_class_waits_and_forgets_it_when_it_no_longer_does():
    waits = ev.QueueWait(t=1.0, proof_class="winning", waiting=1, reason="its GPU is cordoned (gpu1)", gpus=[])
    st = fold([START, waits])
    assert "winning waits: its GPU is cordoned (gpu1)" in render_queues(st, PAL, 200)[0].plain
    st = fold([START, waits, ev.QueueWait(t=2.0, proof_class="winning", waiting=0, reason="", gpus=[])])
    assert "waits" not in render_queues(st, PAL, 200)[0].plain


def test_host_ram_waits_turn_the_host_row_red_past_one_worker_held_back_on_average():
    held = [ev.HostRamWait(t=1.0, worker=w, need=1, free=0, budget=1) for w in ("g0w0", "g0w1")]
    st = fold([START, *held, ev.Note(t=700.0, level="info", text="later")])  # 10 min: the rule's for: too
    v = screen.host_verdict(st)
    assert (v.level, v.alert) == ("red", "C2tuiHostRamWaits") and "2 > 1" in v.reason
    assert screen.host_verdict(fold([START, *held])).level == "ok"  # not yet held for its 10 minutes


def test_the_health_row_shows_what_nvml_and_proc_read_and_nothing_on_sim():
    assert render_health(fold([START]), PAL, 120, 5) == []  # a simulated GPU records none: no line
    st = fold(e for e in read_recording(SCALE27).events if e.t <= 40.0)
    host, gpu = (ln.plain for ln in render_health(st, PAL, 160, 5))
    assert host.startswith("host 16 CPUs") and "(/proc)" in host
    assert gpu.startswith("GPU0 nvml ") and "/700 W" in gpu and "SM 1980/1980 MHz" in gpu and "mine" in gpu


def test_a_workers_zpack_has_a_bar_char_of_its_own():
    """zpack (z's upload form where the GPU builds a/b/c, prover/groth16/host_bytes.py) drew as
    abc's █, read as a/b/c built on the host: now ▄ in abc's colour, beside witness ▒ and prep ▓."""
    from c2tui.widgets.host_ram_bar import host_parts, render_host_ram

    gib = 1 << 30
    held = [ev.HostRam(t=1.0, owner="g0w0", name=n, bytes=b * gib) for n, b in
            (("witness", 4), ("abc", 0), ("zpack", 2), ("prep", 2))]
    st = fold([START, *held])
    chars = {ch for n, ch, _ in host_parts(st.host_ram, PAL) if n}
    assert chars == {"▒", "▄", "▓"}
    styles = {ch: style for _, ch, style in host_parts(st.host_ram, PAL)}
    assert styles["▄"] == PAL.worker(0, alt=True) != styles["▒"]  # abc's colour (abc is 0 beside zpack)
    bar = render_host_ram(st, PAL, 80)[0].plain
    assert "▄" in bar and "█" not in bar.removeprefix("host RAM ")
