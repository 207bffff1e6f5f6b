"""`c2tui compare`'s view: recordings side by side, one column each, on one clock.

The clock is *aligned* time: 0 is each run's alignment point (its first GPU section, say),
so run i is shown at its own run time `t + offsets[i]` - the offsets come from the alignment
(`compare`'s `--align`), this view only follows them. Each column is the dashboard's own
widgets over that run's ReplaySource: the header's rates, the GPU panels, the history with
its switch marks and the segments; the replay bar and keys (space, ← →, [ ], home / end)
drive every column at once. Before a run's point it shows the run's start, after its end
its last moment.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.scalar import Scalar, Unit

import themes
from c2tui.sources.replay import SPEEDS, ReplaySource
from c2tui.dashboard.layout import history_want
from c2tui.widgets.common import Line, StateView, flow
from c2tui.widgets.event_log import EventLog
from c2tui.widgets.gpu_panel import GpuPanel
from c2tui.widgets.header_bar import header_items
from c2tui.widgets.history_view import HistoryView
from c2tui.widgets.key_footer import KeyFooter
from c2tui.widgets.replay_bar import ReplayBar
from c2tui.widgets.segment_panel import SegmentPanel
from c2tui.widgets.timeline import lane_workers
from prover import DashboardState

MAX_PANELS = 2  # GPU panels per column; more GPUs show in the column's history rows


class AlignedClock:
    """One clock over several replays: aligned time t, run i at t + offsets[i]."""

    def __init__(self, sources: Sequence[ReplaySource], offsets: Sequence[float], at: float = 0.0,
                 playing: bool = False, speed: float = 1.0) -> None:
        if len(sources) != len(offsets):
            raise ValueError(f"{len(sources)} recordings but {len(offsets)} offsets")
        self.sources, self.offsets = list(sources), [float(o) for o in offsets]
        self.start = min(s.start_t - o for s, o in zip(self.sources, self.offsets))
        self.end = max(s.end_t - o for s, o in zip(self.sources, self.offsets))
        self.playing, self.speed = playing, speed
        self._last_wall: float | None = None
        self.position = 0.0
        self.seek(at)

    def seek(self, t: float) -> None:
        self.position = min(self.end, max(self.start, t))
        for s, o in zip(self.sources, self.offsets):
            s.seek(self.position + o)  # ReplaySource clamps to its own run

    def tick(self, now: float) -> None:
        if not self.playing:
            self._last_wall = None
            return
        if self._last_wall is not None:
            self.seek(self.position + (now - self._last_wall) * self.speed)
            if self.position >= self.end:
                self.playing = False
        self._last_wall = now

    def toggle(self) -> None:
        if not self.playing and self.position >= self.end:
            self.seek(self.start)
        self.playing, self._last_wall = not self.playing, None

    def faster(self, step: int) -> None:
        i = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - self.speed))
        self.speed = SPEEDS[min(len(SPEEDS) - 1, max(0, i + step))]


class RunHeader(StateView):
    """The column's header: the dashboard header's items, flowed into the column's width."""

    DEFAULT_CSS = "RunHeader { height: 2; padding: 0 1; background: $panel; }"

    def __init__(self, label: str, offset: float, **kw: Any) -> None:
        super().__init__(**kw)
        self.label, self.shift = label, offset

    def _items(self, st: DashboardState) -> list[Line]:
        pal = self.palette
        here = Line.assemble((self.label, "bold " + pal["info"]), (f" at {fmt_t(st.t)} (aligned +{self.shift:.1f}s)", pal["dim"]))
        return [here, *header_items(st, pal)]

    def wanted_height(self, st: DashboardState) -> int:
        width = self.content_size.width or 40
        return len(flow(self._items(st), width))

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        return flow(self._items(st), width)


def fmt_t(t: float) -> str:
    return f"{t:.1f}s"


class RunColumn(Vertical):
    """One recording: its header, GPU panels, history, segments."""

    DEFAULT_CSS = "RunColumn { width: 1fr; height: 1fr; border-right: vkey $panel; }"

    def __init__(self, source: ReplaySource, label: str, offset: float, **kw: Any) -> None:
        super().__init__(**kw)
        self.source, self.label, self.shift = source, label, offset

    def compose(self) -> ComposeResult:
        st = self.source.snapshot()[1]
        yield RunHeader(self.label, self.shift)
        for i in sorted(st.gpus)[:MAX_PANELS] or [0]:
            panel = GpuPanel(i, id=f"gpu{i}", classes="gpu")
            panel.can_focus = False  # a recording: no GPU to cordon, no panel's keys in the footer
            yield panel
        yield HistoryView()
        yield SegmentPanel()
        log = EventLog()
        log.can_focus = False  # one clock's keys in the footer, not a column's log keys
        yield log

    def show(self, st: DashboardState, height: int) -> None:
        head = self.query_one(RunHeader)
        head.show(st)
        panels = list(self.query(GpuPanel))
        lanes = max((len(lane_workers(st.gpus[p.gpu])) for p in panels if p.gpu in st.gpus), default=1)
        left = height - head.wanted_height(st) - (3 + max(1, len(st.segments)))
        each = max(6, min(8 + lanes, (left - 8) // max(1, len(panels))))
        for p in panels:
            p.fixed_height = each
            p.show(st)
        hist = self.query_one(HistoryView)
        ngpu = max(1, len(st.gpus))
        hist.styles.height = Scalar(max(5, min(left - each * len(panels), history_want(ngpu))), Unit.CELLS, Unit.CELLS)
        hist.show(st)
        seg = self.query_one(SegmentPanel)
        seg.styles.height = 3 + max(1, min(4, len(st.segments)))
        seg.show(st)
        self.query_one(EventLog).show(st)  # the rest of the column (1fr)


class CompareApp(App[None]):
    TITLE = "c2tui compare"
    CSS = themes.stylesheet()
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (150, "-wide")]
    BINDINGS = [
        Binding("space", "play", "play/pause", key_display="␣", priority=True),
        Binding("left", "seek(-5)", "-5s", key_display="←", priority=True),
        Binding("right", "seek(5)", "+5s", key_display="→", priority=True),
        Binding("shift+left", "seek(-30)", "-30s", show=False, priority=True),
        Binding("shift+right", "seek(30)", "+30s", show=False, priority=True),
        Binding("left_square_bracket", "speed(-1)", "slower", key_display="["),
        Binding("right_square_bracket", "speed(1)", "faster", key_display="]"),
        Binding("home", "ends(0)", "start", priority=True),
        Binding("end", "ends(1)", "end", priority=True),
        Binding("t", "cycle_theme", "theme"),
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit_now", "quit now", show=False, priority=True),
    ]

    def __init__(self, sources: Sequence[ReplaySource], labels: Sequence[str], offsets: Sequence[float],
                 at: float = 0.0, playing: bool = False, theme: str = "dark", fps: float = 10.0) -> None:
        super().__init__()
        self.aligned = AlignedClock(sources, offsets, at=at, playing=playing)
        self.interrupted = False  # Ctrl-C or a stop signal: the command exits 3
        self.labels = list(labels)
        self.theme_names = themes.names()
        self._specs = {n: themes.load(n) for n in self.theme_names}
        self.theme_name = theme
        self.palette = self._specs[theme].palette
        self.fps = fps

    def compose(self) -> ComposeResult:
        bar = ReplayBar(id="replay")
        bar.clock_label = "time after each run's anchor"
        yield bar
        with Horizontal(id="runs"):
            for i, (src, label) in enumerate(zip(self.aligned.sources, self.labels)):
                yield RunColumn(src, label, self.aligned.offsets[i], id=f"run{i}")
        yield KeyFooter()

    def on_mount(self) -> None:
        for spec in self._specs.values():
            self.register_theme(themes.textual_theme(spec))
        self.theme = themes.PREFIX + self.theme_name
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self.set_interval(1.0 / self.fps, self.tick)
        self.call_after_refresh(self.draw)
        from c2tui.cli import stop_signals

        stop_signals.on_loop(self.action_quit_now)  # SIGINT, SIGTERM, SIGHUP: as Ctrl-C

    def action_quit_now(self) -> None:
        """Ctrl-C or a stop signal: the terminal put back, exit 3 (docs/exit-codes.md)."""
        self.interrupted = True
        self.exit()

    def exit_code(self) -> int:
        """3 when interrupted or crashed (as the dashboard's), else 0."""
        return 3 if self.interrupted or self.return_code not in (None, 0) else 0

    def _on_theme_changed(self, theme: Any) -> None:
        name = theme.name.removeprefix(themes.PREFIX)
        if name in self._specs:
            self.theme_name, self.palette = name, self._specs[name].palette
        self.draw()

    def on_resize(self) -> None:
        self.draw()

    def tick(self) -> None:
        import time

        if self.aligned.playing:
            self.aligned.tick(time.monotonic())
            self.draw()

    def draw(self) -> None:
        c = self.aligned
        self.query_one(ReplayBar).show(c.position, c.start, c.end, c.playing, c.speed)
        height = self.size.height - 2
        for col in self.query(RunColumn):
            col.show(col.source.snapshot()[1], height)

    def on_replay_bar_seek(self, message: ReplayBar.Seek) -> None:
        self.aligned.seek(message.t)
        self.draw()

    def action_play(self) -> None:
        self.aligned.toggle()
        self.draw()

    def action_seek(self, dt: float) -> None:
        self.aligned.seek(self.aligned.position + dt)
        self.draw()

    def action_speed(self, step: int) -> None:
        self.aligned.faster(step)
        self.draw()

    def action_ends(self, which: int) -> None:
        self.aligned.seek(self.aligned.end if which else self.aligned.start)
        self.draw()

    def action_cycle_theme(self) -> None:
        i = self.theme_names.index(self.theme_name)
        self.theme = themes.PREFIX + self.theme_names[(i + 1) % len(self.theme_names)]


def compare_app(files: Sequence[str | Path], offsets: Sequence[float], **kw: Any) -> CompareApp:
    """The view over recordings read from files (one ReplaySource each, paused)."""
    sources = [ReplaySource.from_file(f, at=0.0, playing=False) for f in files]
    return CompareApp(sources, [Path(f).name.split(".")[0] for f in files], offsets, **kw)


async def compare_svg(files: Sequence[str | Path], offsets: Sequence[float], at: float, size: tuple[int, int],
                      theme: str = "dark") -> str:
    """The view at aligned time `at`, rendered headlessly (compare -o), as SVG."""
    app = compare_app(files, offsets, at=at, theme=theme)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.pause()
        names = " · ".join(Path(f).name.split(".")[0] for f in files)
        return app.export_screenshot(title=f"c2tui compare · {names} @ {at:+g}s aligned")
