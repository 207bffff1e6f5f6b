"""The pure drawing functions: VRAM bar by owner, lock lanes, phase bar, timeline lanes."""
from __future__ import annotations

from prover import events as ev
from prover.fold.model import DashboardState
import themes
from c2tui.widgets.lock_lanes import render_locks
from c2tui.widgets.phase_bar import render_phase_bar, segment_widths
from c2tui.widgets.timeline import render_timeline
from c2tui.widgets.vram_bar import render_vram

PAL = themes.load("dark").palette
GiB = 1 << 30


def state(*events) -> DashboardState:
    s = DashboardState()
    for e in events:
        s.apply(e)
    return s


def one_worker_vram(pool_reserved: int) -> DashboardState:
    """A 141 GiB card under a 16 GiB budget, g0w0 holding d_a 4 GiB and d_bc 8 GiB."""
    return state(
        ev.GpuInfo(t=0, gpu=0, name="x", total_bytes=141 * GiB, budget_bytes=16 * GiB, simulated=False, nvml=True),
        ev.Alloc(t=1, gpu=0, owner="g0w0", name="d_a", bytes=4 * GiB),
        ev.Alloc(t=1, gpu=0, owner="g0w0", name="d_bc", bytes=8 * GiB),
        ev.VramSample(t=2, gpu=0, budget=16 * GiB, pool_reserved=pool_reserved, pool_used=12 * GiB,
                      device_used=15 * GiB, device_total=141 * GiB, util=0.5),
    )


def test_vram_bar_split_by_owner_pool_free_budget():
    s = one_worker_vram(pool_reserved=14 * GiB)
    bar, legend = render_vram(s.gpus[0], PAL, 100)
    text = bar.plain
    assert text.startswith("VRAM ") and text.endswith(" pool 14.0/16.0 GiB")  # pool: live + pool-cached (issue 33)
    cells = text[len("VRAM "): -len(" pool 14.0/16.0 GiB")]
    # 141 GiB card, 16 GiB budget: the bar spans a little more than the budget, the mark inside
    assert cells.count("█") > 0 and abs(cells.count("▓") - 2 * cells.count("█")) <= 1  # d_bc is twice d_a
    assert cells.count("░") >= 1 and "┃" in cells
    assert cells.index("┃") > cells.rindex("░")
    leg = legend.plain
    assert "g0w0" in leg and "d_a 4.0" in leg and "d_bc 8.0" in leg and "pool-cached 2.0" in leg
    assert "free 2.0" in leg and "budget 16.0" in leg and "NVML 15.0 GiB/141.0 GiB" in leg


def test_lock_lanes_holder_and_waiters_with_times():
    s = state(
        ev.LockRequested(t=1.0, gpu=0, lock="compute", worker="g0w0", part="s0p0"),
        ev.LockAcquired(t=1.0, gpu=0, lock="compute", worker="g0w0", part="s0p0", wait=0.0),
        ev.LockRequested(t=2.0, gpu=0, lock="compute", worker="g0w1", part="s0p1"),
        ev.Note(t=5.0, text="tick"),
    )
    mem, comp = (ln.plain for ln in render_locks(s.gpus[0], s.t, PAL, 120))
    assert mem.startswith("mem") and "free" in mem and "no waiters" in mem
    assert "● g0w0 s0p0 held  4.00s" in comp
    assert "waiting g0w1 s0p1 3.00s" in comp


def test_phase_bar_segments_and_current_phase_advancing():
    s = state(
        ev.PartitionQueued(t=0, part="s0p0", sector=0, index=0),
        ev.PhaseStart(t=0, part="s0p0", phase=ev.Phase.synthesis, worker="w"),
        ev.PhaseEnd(t=1, part="s0p0", phase=ev.Phase.synthesis, worker="w", duration=1),
        ev.PhaseStart(t=1, part="s0p0", phase=ev.Phase.prep_msm, worker="w"),
        ev.PhaseProgress(t=1.5, part="s0p0", phase=ev.Phase.prep_msm, frac=0.5),
    )
    p = s.partitions["s0p0"]
    widths = segment_widths(32)
    assert sum(widths) == 32 and len(widths) == 8
    bar = render_phase_bar(p, s.t, PAL, 32).plain
    assert bar[: widths[0]] == "█" * widths[0]           # synthesis done
    cur = bar[widths[0]: widths[0] + widths[1]]
    assert cur.startswith("██") and "▌" in cur              # prep_msm half way
    assert bar[widths[0] + widths[1]:] == "·" * (32 - widths[0] - widths[1])  # the rest pending


def test_timeline_lanes_show_phases_and_lock_waits():
    s = state(
        ev.WorkerStarted(t=0, gpu=0, worker="g0w0"),
        ev.WorkerStarted(t=0, gpu=0, worker="g0w1"),
        ev.PhaseStart(t=0, part="a", phase=ev.Phase.ntt_h, worker="g0w0", gpu=0),
        ev.LockRequested(t=0, gpu=0, lock="compute", worker="g0w1", part="b"),
        ev.PhaseEnd(t=5, part="a", phase=ev.Phase.ntt_h, worker="g0w0", gpu=0, duration=5),
        ev.LockAcquired(t=5, gpu=0, lock="compute", worker="g0w1", part="b", wait=5),
        ev.PhaseStart(t=5, part="b", phase=ev.Phase.ntt_h, worker="g0w1", gpu=0),
        ev.Note(t=10, text="x"),
    )
    lanes = [ln.plain for ln in render_timeline(s.gpus[0], s.t, PAL, 47, window=10.0)]
    w0, w1, axis = lanes
    assert w0.startswith("g0w0  │") and w1.startswith("g0w1  │")
    body0, body1 = w0[7:], w1[7:]
    half = len(body0) // 2
    assert set(body0[:half - 1]) == {"█"} and set(body0[half + 1:]) == {"·"}   # ran, then idle
    assert set(body1[:half - 1]) == {"▒"} and set(body1[half + 1:]) == {"█"}   # waited, then ran
    assert axis.rstrip().endswith("now") and "-5s" in axis


def test_help_lists_the_kernel_settings_in_force() -> None:
    from c2tui.widgets.help_screen import kernel_section
    from prover import KernelSettings

    kernels = KernelSettings(msm_max_c=12).model_dump(mode="json")
    [(title, rows)] = kernel_section(kernels)
    assert "in force" in title and "[kernels]" in title and ("msm_max_c", "12") in rows and ("nvrtc_arch", "none") in rows
    from c2tui.widgets.help_screen import KEY_MAX
    from prover.settings import KernelSettings

    assert max(len(k) for k in KernelSettings.model_fields) <= KEY_MAX  # no setting's name folds in the key column
    assert ("setup_gpu", "on") in rows
    assert kernel_section({}) == []  # a recording from before the run said nothing


def test_lock_lanes_drop_whole_parts_at_a_panel_width():
    """Two GPU panels side by side get ~60 columns: a lane keeps the holder, the sync cause in
    its longest form that fits, the waiters that fit whole with the rest counted, and never
    ends in a word cut by '…' (it did: "device sync behind g0w0 s2…", "waiting g0w1 s17p0 0…")."""
    s = state(
        ev.LockAcquired(t=1.0, gpu=0, lock="compute", worker="g0w0", part="s27p6", wait=0.0),
        ev.LockAcquired(t=1.5, gpu=0, lock="mem", worker="g0w2", part="s28p0", wait=0.0),
        ev.DeviceSyncStart(t=1.5, gpu=0, worker="g0w2", part="s28p0", behind_worker="g0w0", behind_part="s27p6"),
        ev.LockRequested(t=1.6, gpu=0, lock="compute", worker="g0w1", part="s27p8"),
        ev.LockRequested(t=1.7, gpu=0, lock="compute", worker="g0w3", part="s27p9"),
        ev.Note(t=2.0, text="tick"),
    )
    for width in range(40, 131):
        for ln in render_locks(s.gpus[0], s.t, PAL, width):
            assert ln.cell_len <= width and "…" not in ln.plain, (width, ln.plain)
    mem, comp = (ln.plain for ln in render_locks(s.gpus[0], s.t, PAL, 63))
    assert mem.endswith("sync behind g0w0 s27p6 500 ms") and "device" not in mem
    assert comp.endswith("waiting g0w1 s27p8 0.40s +1")
    mem, comp = (ln.plain for ln in render_locks(s.gpus[0], s.t, PAL, 56))
    assert mem.endswith("sync 500 ms") and comp.endswith("waiting g0w1 0.40s +1")
    assert render_locks(s.gpus[0], s.t, PAL, 50)[1].plain.endswith("2 waiting")
    wide = [ln.plain for ln in render_locks(s.gpus[0], s.t, PAL, 130)]
    assert "device sync behind g0w0 s27p6 500 ms  no waiters" in wide[0]
    assert "waiting g0w1 s27p8 0.40s, g0w3 s27p9 0.30s" in wide[1]


def test_vram_legend_keeps_whole_parts_in_a_narrow_panel():
    """At 220x60 two GPU panels stand side by side 65 columns wide; the legend ended
    'free 4.0  ┃b…'. Now a part that has no room is left out whole."""
    s = one_worker_vram(pool_reserved=12 * GiB)
    for width in range(30, 120):
        leg = render_vram(s.gpus[0], PAL, width)[1].plain
        assert len(leg) <= width and "…" not in leg, (width, leg)
    leg = render_vram(s.gpus[0], PAL, 63)[1].plain
    assert leg.rstrip().endswith("free 4.0") and "budget" not in leg
    assert render_vram(s.gpus[0], PAL, 120)[1].plain.endswith("┃budget 16.0  NVML 15.0 GiB/141.0 GiB")


def test_gpu_overview_line_leaves_out_whole_cells_at_80_columns():
    """Two GPUs at 80x24: the overview line ended 'done 29 fb 31 OOM… shown'. Now the least
    needed cells go whole (done first), and the OOM count and where the panel is stay."""
    from c2tui.widgets.gpu_overview import overview_line

    s = state(
        ev.GpuInfo(t=0, gpu=0, name="x", total_bytes=16 * GiB, budget_bytes=16 * GiB, simulated=True, nvml=False),
        ev.VramSample(t=1, gpu=0, budget=16 * GiB, pool_reserved=12 * GiB, pool_used=12 * GiB, util=0.81),
        ev.LockAcquired(t=1, gpu=0, lock="mem", worker="g0w1", part="s5p9", wait=0.0),
        ev.LockReleased(t=1.2, gpu=0, lock="mem", worker="g0w1", hold=0.2),
        ev.LockAcquired(t=1, gpu=0, lock="compute", worker="g0w2", part="s5p8", wait=0.0),
        ev.LockRequested(t=1.5, gpu=0, lock="compute", worker="g0w0", part="s6p0"),
        ev.LockRequested(t=1.6, gpu=0, lock="compute", worker="g0w1", part="s6p2"),
    )
    g = s.gpus[0]
    g.done, g.fallbacks, g.ooms = 1029, 1031, 2
    for where in ("shown", "partly", "below"):
        for width in range(60, 161):
            line = overview_line(g, PAL, width, where).plain
            assert len(line) == width and "…" not in line, (width, line)
    line = overview_line(g, PAL, 80, "partly").plain
    assert "OOM 2" in line and "fb 1031" in line and "done" not in line and line.endswith("◐ partly")
    assert "done 1029 fb 1031 OOM 2" in overview_line(g, PAL, 160, "shown").plain


def test_history_marks_name_a_change_whole_or_not_at_all():
    """Changes a few seconds apart (the keys pressed one after another) left their names cut
    above the history: "l▼lock_m▼▼▼▼p▼b_g2→g▼pa▼paused→off". A name with room on neither side
    of its mark is left out; the mark stays."""
    from types import SimpleNamespace

    from c2tui.widgets.history_view import marks_row, short_mark

    marks = {c: SimpleNamespace(knob=k, new=v, gpu=None) for c, k, v in [
        (20, "lock_mode", "reserved"), (22, "lock_mode", "single"), (24, "lock_mode", "narrow"),
        (45, "mem_sync", "stream"), (48, "prestage", "False"), (70, "paused", "True")]}
    row = marks_row(marks, 80, PAL, 120).plain
    words = row.replace("▼", " ").split()
    assert set(words) <= {short_mark(m) for m in marks.values()}, row
    assert row.count("▼") == len(marks)
    assert "lock_mode→reserved▼ ▼ ▼lock_mode→narrow" in row and "▼prestage→off" in row and "▼paused→on" in row


def test_gpu_subtitle_says_what_nvml_counts_beyond_the_budget_whole_or_shortened():
    """NVML's used bytes and the part of them outside the budget's pool (keys on the device,
    NTT plans, scratch, the CUDA context): whole where the border has room, then used alone,
    then nothing; the timeline's span always ends it."""
    from c2tui.widgets.gpu_panel import subtitle_text

    g = one_worker_vram(pool_reserved=12 * GiB).gpus[0]
    g.device_used = 30 * GiB  # 18 GiB beyond the 12 GiB pool
    wide = subtitle_text(g, PAL, 10.0).plain
    assert wide == "done 0  fallbacks 0  OOM 0  NVML 30.0 GiB (18.0 outside the budget)  timeline 10s"
    assert subtitle_text(g, PAL, 10.0, len(wide)).plain == wide
    assert subtitle_text(g, PAL, 10.0, len(wide) - 1).plain == "done 0  fallbacks 0  OOM 0  NVML 30.0 GiB  timeline 10s"
    assert subtitle_text(g, PAL, 10.0, 40).plain == "done 0  fallbacks 0  OOM 0  timeline 10s"
    g.device_used = 12 * GiB + (1 << 29)  # under a GiB beyond the pool: not worth a word
    assert "outside" not in subtitle_text(g, PAL, 10.0).plain
    g.nvml = False
    assert "NVML" not in subtitle_text(g, PAL, 10.0).plain
