"""The event log on the whole screen (`e`): every note the run kept, where the dashboard
has no room for the log (it is hidden at 80x24) or it is cut short. Same keys as the
log panel; it follows the app's latest snapshot."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from c2tui.widgets.event_log import EventLog
from c2tui.widgets.key_footer import KeyFooter


class EventsScreen(Screen[None]):
    BINDINGS = [Binding("e,q", "dismiss", "close"), Binding("question_mark", "app.help", "help", key_display="?")]

    def compose(self) -> ComposeResult:
        yield EventLog(id="log-full")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._shown = None
        self.follow()
        self.set_interval(1.0 / max(1.0, getattr(self.app, "fps", 10.0)), self.follow)
        self.query_one(EventLog).focus()

    def follow(self) -> None:
        st = getattr(self.app, "state", None)
        if st is not None and st is not self._shown:
            self._shown = st
            self.query_one(EventLog).show(st)
