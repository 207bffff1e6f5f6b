"""The c2tui dashboard: a Textual app over a Source (the live prover, or a recording).

Data flow: the source folds events into DashboardState off the UI thread and publishes
whole snapshots; a `set_interval` timer (10 Hz by default) takes the latest one and, only
if it changed, hands it to the widgets, which draw it lazily at their real size. Controls
go to the prover's Controller and change nothing on screen by themselves: the screen shows
a knob's new value only when the ModeChange event it causes comes back through the fold
(so what you see is what the prover did, and it is recorded and replayed like the rest).
"""
from __future__ import annotations

import sys
from functools import partial
from typing import Any

from textual.app import App, ComposeResult
from textual import events
from textual.binding import Binding
from textual.css.scalar import Scalar
from textual.css.query import NoMatches
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen

import themes
from c2tui.dashboard import layout
from c2tui.cli import stop_signals
from c2tui.dashboard.live_controls import LiveControls
from c2tui.dashboard.quitting import Quitting
from c2tui.sources.live import Source
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.common import StateView
from c2tui.widgets.event_log import EventLog
from c2tui.widgets.events_screen import EventsScreen
from c2tui.widgets.experiment_panel import ExperimentScreen
from c2tui.widgets.gpu_overview import GpuOverview
from c2tui.widgets.gpu_panel import GpuPanel
from c2tui.widgets.history_view import HistoryView
from c2tui.widgets.segment_panel import SegmentPanel
from c2tui.widgets.timeline import lane_workers
from c2tui.widgets.host_ram_bar import HostRamBar
from c2tui.widgets.queue_bar import QueueBar
from c2tui.widgets.startup_panel import StartupPanel
from c2tui.widgets.header_bar import HeaderBar
from c2tui.widgets.health_panel import HealthPanel
from c2tui.widgets.key_footer import KeyFooter
from c2tui.widgets.help_screen import HelpScreen
from c2tui.widgets.partition_table import PartitionTable
from c2tui.widgets.replay_bar import ReplayBar
from prover import KNOBS
from prover import DashboardState

SWITCH_INTERVAL = 0.001  # seconds; see on_mount
# live controls: the knobs' keys (prover.knobs), then submitting a sector; each goes to the Controller
LIVE_BINDINGS = [*(Binding(k.key, k.action, k.label, key_display=k.display) for knob in KNOBS.values() for k in knob.keys),
                 Binding("n", "submit", "submit sector"), Binding("W", "submit_winning", "winning", show=False),
                 Binding("a", "job", "job action", show=False)]  # w filters partitions
LIVE_ACTIONS = {b.action for b in LIVE_BINDINGS}
LIVE_KEYS = {k for b in LIVE_BINDINGS for k in b.key.split(",")}  # 'plus,equals_sign': two keys
# keys that go together show once in the footer ("← → seek 5s"), so 80 columns hold more
SEEK, SPEED, ENDS = Binding.Group("seek 5s"), Binding.Group("speed"), Binding.Group("start/end")
REPLAY_ACTIONS = {"play", "seek_back", "seek_fwd", "seek_back_long", "seek_fwd_long", "slower",
                  "faster", "seek_start", "seek_end"}


PARTITION_KEYS = [("s", "cycle_sort", "sort"), ("f", "cycle_state", "state"), ("g", "cycle_gpu", "gpu"),
                  ("w", "cycle_worker", "worker")]
MAX_GPU_PANELS = 8  # a fleet: one host of panels; more costs more than a frame (benchmarks/bench_fleet.py)


def set_style(w: Any, **styles: Any) -> None:
    """Set the styles that changed (each setting asks for a layout); None: leave as it is."""
    for name, value in styles.items():
        if value is None:
            continue
        cur = getattr(w.styles, name)
        if getattr(cur, "name", None) == value:  # a layout, by its name
            continue
        if getattr(cur, "unit", None) is not None and cur.unit.name == "CELLS" and cur.value == value:
            continue  # a size in cells
        if cur != value and str(cur) != str(value):  # "1fr", "100%" read back as Scalars
            setattr(w.styles, name, value)


def set_display(w: Any, on: bool) -> None:
    if w.display != on:  # setting it asks for a layout
        w.display = on


class DashboardScreen(Screen[None]):
    """The dashboard's screen: the GPU panels' box takes the focus first, as before the overview
    and the panels took focus (a modal screen keeps the app's: its first focusable)."""

    AUTO_FOCUS = "#gpus"


class DashboardApp(LiveControls, Quitting, App[None]):
    TITLE = "c2tui"
    CSS = themes.stylesheet()
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (150, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    ENABLE_COMMAND_PALETTE = False

    BINDINGS = [
        *LIVE_BINDINGS,  # hidden in replay
        # replay controls (hidden live)
        Binding("space", "play", "play/pause", key_display="␣", priority=True),
        Binding("left", "seek_back", "-5s", key_display="←", priority=True, group=SEEK),
        Binding("right", "seek_fwd", "+5s", key_display="→", priority=True, group=SEEK),
        Binding("shift+left", "seek_back_long", "-30s", show=False, priority=True),
        Binding("shift+right", "seek_fwd_long", "+30s", show=False, priority=True),
        Binding("left_square_bracket", "slower", "slower", key_display="[", group=SPEED),
        Binding("right_square_bracket", "faster", "faster", key_display="]", group=SPEED),
        Binding("home", "seek_start", "start", priority=True, group=ENDS),
        Binding("end", "seek_end", "end", priority=True, group=ENDS),
        # always
        Binding("e", "events", "events"),
        Binding("h", "history", "history"),
        Binding("X", "experiment", "experiment", show=False),  # the experiment panel (c2tui/widgets/experiment_panel.py)
        Binding("t", "cycle_theme", "theme"),
        Binding("question_mark", "help", "help", key_display="?"),
        Binding("q", "quit", "quit"),
        Binding("q", "detach", "detach"),  # attached: q leaves the prover running (check_action picks)
        # the partition table's sort and filters work from anywhere, not only once Tab focused it
        *(Binding(k, f"partitions('{a}')", d, show=False) for k, a, d in PARTITION_KEYS),
        Binding("ctrl+c", "quit_now", "quit now", show=False, priority=True),
    ]

    def __init__(self, source: Source, theme: str = "dark", fps: float = 10.0, prefs: Any = None) -> None:
        """`prefs` (c2tui/dashboard/prefs.py): the saved layout, and where `t` and `h` are remembered (None: nowhere)."""
        super().__init__()
        self.prefs = prefs
        self.source = source
        self.replay = isinstance(source, ReplaySource)
        self.theme_names = themes.names()
        if theme not in self.theme_names:
            raise ValueError(f"unknown theme {theme!r}; have {', '.join(self.theme_names)}")
        self._specs = {n: themes.load(n) for n in self.theme_names}
        self.theme_name = theme
        self.palette = self._specs[theme].palette
        self.fps = fps
        self._shown_version = -1
        self.frames = 0  # snapshots drawn (for the fps benchmark)
        self.state = None
        self.plan: layout.Plan | None = None
        self.history_first = bool(getattr(prefs, "history_first", False))  # `h`: the history in the partitions' place
        self._theme_chosen = False  # a theme chosen with `t` in this session (only that one is remembered)
        self.errors: list[str] = []
        self._switch_interval: float | None = None
        self.quit_how = "quit"  # quit | drained | quit now (n abandoned): said in the exit summary
        self.interrupted = False  # Ctrl-C, quit now, or a drain that timed out: the command exits 3
        self.drain_timeout = 600.0
        self._panels: list[GpuPanel] = []  # the GPU panels mounted, in order (_sync_panels)
        self._mounts = 0

    # --- layout -------------------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        return DashboardScreen(id="_default")  # as App's, focusing the GPU panels' box first

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        if self.replay:
            yield ReplayBar(id="replay")
        yield GpuOverview(id="overview")
        yield HostRamBar(id="host-ram", classes="ops")  # the operators' bars: rows above the GPU panels
        yield StartupPanel(id="startup", classes="ops")
        yield QueueBar(id="queues", classes="ops")
        yield HealthPanel(id="health", classes="ops")  # the GPUs' own health (NVML) and the host's CPUs
        with Horizontal(id="top"):
            with VerticalScroll(id="gpus"):
                pass
            yield HistoryView(id="history")
        yield SegmentPanel(id="segments")
        with Horizontal(id="side"):
            yield PartitionTable(id="partitions")
            yield EventLog(id="log")
        yield KeyFooter(id="footer")

    def on_mount(self) -> None:
        for spec in self._specs.values():
            self.register_theme(themes.textual_theme(spec))
        self.theme = themes.PREFIX + self.theme_name
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self.query_one(HeaderBar).source_label = getattr(self.source, "label", "")
        if not self.replay:
            # Prover threads wake up at lock handoffs and phase ends and then need the GIL;
            # while a frame is being drawn they would wait up to the switch interval (5 ms by
            # default) each time, ~3% of a partition's critical path. 1 ms keeps it under 1%.
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL))
        self.source.start()
        stop_signals.on_loop(self.action_quit_now)  # SIGINT, SIGTERM, SIGHUP: quit now, as Ctrl-C (every source)
        self.set_interval(1.0 / self.fps, self.tick)
        self.tick()

    def on_unmount(self) -> None:
        try:
            self.source.stop()
        except Exception:  # noqa: BLE001 - quitting must not hang on a broken source
            pass
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)

    def _on_theme_changed(self, theme: Any) -> None:
        name = theme.name.removeprefix(themes.PREFIX)
        if name in self._specs:
            self.theme_name = name
            self.palette = self._specs[name].palette
            if self._theme_chosen:  # `replay --theme light` once made light every dashboard's theme
                self._remember(theme=name)
        self.redraw()

    def _remember(self, **changes: Any) -> None:
        """Keep a preference for the next session (run only: a snapshot or a test passes none)."""
        if self.prefs is not None and any(getattr(self.prefs, k) != v for k, v in changes.items()):
            from c2tui.dashboard import prefs

            self.prefs = self.prefs.model_copy(update=changes)
            prefs.save(self.prefs)

    def on_key(self, event: events.Key) -> None:
        """A steering key on a read-only client: say why nothing happens (its binding is off)."""
        if event.key in LIVE_KEYS and getattr(self.source, "readonly", False):
            self.notify("read-only: this client watches the run and cannot steer it", severity="warning")

    def on_resize(self) -> None:
        self.redraw()

    # --- the frame loop -----------------------------------------------------------------
    def tick(self) -> None:
        self.source.tick()
        version, st = self.source.snapshot()
        if version != self._shown_version:
            self._shown_version = version
            try:
                self.draw(st)
            except NoMatches:  # a tick that lands while the app is shutting down
                pass

    def redraw(self) -> None:
        if self.state is not None:
            self.draw(self.state)

    def draw(self, st: DashboardState) -> None:
        self.state = st
        self.frames += 1
        self.query_one(HeaderBar).show(st)
        if self.replay:
            src: ReplaySource = self.source  # type: ignore[assignment]
            self.query_one(ReplayBar).show(src.position, src.start_t, src.end_t, src.playing, src.speed)
        panels = self._sync_panels(sorted(st.gpus)[:MAX_GPU_PANELS])  # a fleet's 800 GPUs: the first hosts'
        self.arrange(st, panels)
        for p in panels:
            p.show(st)
        self.query_one(HistoryView).show(st)
        self.query_one(SegmentPanel).show(st)
        self.query_one(GpuOverview).show(st)
        for w in self.query(".ops").results(StateView):  # host RAM, start-up, queues by class, health
            w.show(st)
        self.query_one(PartitionTable).show(st)
        self.query_one(EventLog).show(st)

    def _sync_panels(self, shown: list[int]) -> list[GpuPanel]:
        """The GPU panels for `shown`, in order: a panel whose GPU stays is kept, one whose GPU
        went is removed, a new GPU's is mounted in its place. Textual removes later than it is
        asked to, so a panel's id is unique to its mount (`gpu3-m7`): a GPU that leaves and comes
        back, or a whole host set replaced in one frame, can never collide with a panel still
        on its way out (DuplicateIds, issue 35)."""
        if [p.gpu for p in self._panels] == shown:
            return self._panels
        box = self.query_one("#gpus", VerticalScroll)
        keep = {p.gpu: p for p in self._panels if p.gpu in shown}
        for p in self._panels:
            if p.gpu not in keep:
                p.remove()
        panels: list[GpuPanel] = []
        for i in shown:
            if i in keep:
                panels.append(keep[i])
                continue
            self._mounts += 1
            p = GpuPanel(i, id=f"gpu{i}-m{self._mounts}", classes="gpu")
            later = next((keep[j] for j in shown if j > i and j in keep), None)
            box.mount(p, before=later) if later is not None else box.mount(p)
            panels.append(p)
        self._panels = panels
        return panels

    def arrange(self, st: DashboardState, panels: list[GpuPanel]) -> None:
        """Share the screen (c2tui/dashboard/layout.py): every panel's height from one plan."""
        lanes = max((len(lane_workers(st.gpus[p.gpu])) for p in panels if p.gpu in st.gpus), default=1)
        used = self.query_one(HeaderBar).wanted_height(st) + (1 if self.replay else 0) + 1  # + footer
        used += sum(w.wanted_height(st) or 0 for w in self.query(".ops").results(StateView))  # host RAM, start-up, queues
        plan = partial(layout.plan, ngpu=len(panels), lanes=lanes, segments=len(st.segments),
                       history_first=self.history_first)
        pl = plan(self.size.width, self.size.height - used)
        # the panels scroll, or a fleet has GPUs without a panel: the overview's lines (its
        # wanted height: a line per GPU or per host, c2tui/widgets/gpu_overview.py) come out of the same height
        overflow = -(-len(panels) // pl.gpu_cols) * pl.panel_h > pl.gpus_h or len(st.gpus) > len(panels)
        ov = self.query_one(GpuOverview)
        if overflow:
            pl = plan(self.size.width, self.size.height - used - ov.wanted_height(st))
        if overflow and not ov.overflow:  # where the panels are is known after the layout
            self.call_after_refresh(ov.follow)
        ov.overflow = overflow
        self.plan = pl
        set_style(self.query_one("#top"), layout="horizontal" if pl.wide else "vertical", height=pl.top_h)
        box = self.query_one("#gpus")
        set_style(box, height=pl.gpus_h, grid_size_columns=pl.gpu_cols)
        if box.styles.grid_rows != (Scalar.from_number(pl.panel_h),):
            box.styles.grid_rows = [pl.panel_h]  # in cells: "auto" rows keep a panel's first height
        hist = self.query_one(HistoryView)
        set_display(hist, pl.history_h > 0)
        set_style(hist, height=max(1, pl.history_h), width=pl.history_w if pl.wide else "1fr")
        seg = self.query_one(SegmentPanel)
        set_display(seg, pl.segments_h > 0)
        set_style(seg, height=max(1, pl.segments_h))
        side = self.query_one("#side")
        set_display(side, pl.side_h + pl.events_h > 0)
        set_style(side, layout="horizontal" if pl.wide else "vertical",
                  height=max(1, pl.side_h + (0 if pl.wide else pl.events_h)))
        set_display(self.query_one(PartitionTable), pl.side_h > 0)
        log = self.query_one(EventLog)
        set_display(log, pl.events_h > 0)
        set_style(log, height="1fr" if pl.wide else max(1, pl.events_h))  # wide: beside the partitions
        for p in panels:
            p.fixed_height = pl.panel_h

    # --- which keys apply ---------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in LIVE_ACTIONS:  # a read-only client's footer lists no steering keys
            return not self.replay and not getattr(self.source, "readonly", False)
        if action in REPLAY_ACTIONS:
            return self.replay
        if action in ("quit", "detach"):
            return (action == "detach") == (getattr(self.source, "kind", "") == "attach")
        return True

    # --- replay controls ----------------------------------------------------------------
    def _replay(self, fn: str, *args: Any) -> None:
        getattr(self.source, fn)(*args)
        self.tick()

    def action_play(self) -> None:
        self._replay("toggle")

    def action_seek_back(self) -> None:
        self._replay("seek_by", -5.0)

    def action_seek_fwd(self) -> None:
        self._replay("seek_by", 5.0)

    def action_seek_back_long(self) -> None:
        self._replay("seek_by", -30.0)

    def action_seek_fwd_long(self) -> None:
        self._replay("seek_by", 30.0)

    def action_slower(self) -> None:
        self._replay("slower")

    def action_faster(self) -> None:
        self._replay("faster")

    def action_seek_start(self) -> None:
        self._replay("seek", -1.0)

    def action_seek_end(self) -> None:
        self._replay("seek", float("inf"))

    def on_replay_bar_seek(self, message: ReplayBar.Seek) -> None:
        self._replay("seek", message.t)

    # --- always -------------------------------------------------------------------------
    def action_cycle_theme(self) -> None:
        self._theme_chosen = True  # `t`: remembered for the next session (a --theme given is not)
        i = self.theme_names.index(self.theme_name)
        self.theme = themes.PREFIX + self.theme_names[(i + 1) % len(self.theme_names)]

    def action_history(self) -> None:
        """Stacked layouts: the history in the partitions' place, and back; wide ones have room."""
        if self.size.width >= layout.WIDE:
            self.notify("the history is beside the GPU panels at this width", severity="information")
            return
        self.history_first = not self.history_first
        self._remember(history_first=self.history_first)
        self.redraw()

    def action_events(self) -> None:
        if not isinstance(self.screen, EventsScreen):
            self.push_screen(EventsScreen(), lambda _: self.redraw())

    def action_experiment(self) -> None:
        if not isinstance(self.screen, ExperimentScreen):
            self.push_screen(ExperimentScreen(), lambda _: self.redraw())

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            kernels = self.state.config.get("kernels") if self.state is not None else None
            self.push_screen(HelpScreen(self.replay, kernels if isinstance(kernels, dict) else None))

    def action_partitions(self, action: str) -> None:
        getattr(self.query_one(PartitionTable), f"action_{action}")()
