"""Quitting the dashboard: never drop in-flight work without asking (q: drain, quit now or
cancel), or, on Ctrl-C and the stop signals, without a record (each in-flight partition
recorded as abandoned, exit 3); attached, q detaches and the prover goes on. A mixin of
DashboardApp, as LiveControls is."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from c2tui.widgets.quit_dialog import DRAIN, NOW, QuitDialog, in_flight, record_abandoned
from prover import EngineHandle

if TYPE_CHECKING:
    from textual.app import App

    from c2tui.sources.live import Source

    _App = App[None]
else:
    _App = object


class Quitting(_App):
    """q, the quit dialog's choices, Ctrl-C and detaching; the exit status they lead to."""

    source: Source
    quit_how: str
    interrupted: bool
    drain_timeout: float

    @property
    def crashed(self) -> bool:
        """The app stopped on an exception of its own (Textual printed it): never a clean exit,
        the command says so and exits 3 (before issue 35 a crashed dashboard exited 0)."""
        return self.return_code not in (None, 0)

    def exit_code(self) -> int:
        """3 when interrupted (Ctrl-C, quit now) or crashed, else 0 (docs/exit-codes.md)."""
        if self.crashed:
            print("error: the dashboard stopped on an internal error (above)", file=sys.stderr)
        return 3 if self.interrupted or self.crashed else 0

    def _engine(self) -> EngineHandle | None:
        engine = getattr(self.source, "engine", None)  # None: replay, or attached (q detaches)
        return None if engine is None or engine.finished else engine

    async def action_quit(self) -> None:
        engine = self._engine()
        if self.quit_how == "draining":  # q again while draining: quit now
            self.action_quit_now()
            return
        parts = in_flight(self.source.snapshot()[1]) if engine is not None else []
        if not parts:
            self.exit()
        elif not isinstance(self.screen, QuitDialog):
            self.push_screen(QuitDialog([p.part for p in parts]), self._quit_choice)

    def _quit_choice(self, choice: str | None) -> None:
        engine = self._engine()
        if choice == DRAIN and engine is None:  # it finished while the dialog was up
            self.exit()
        elif choice == NOW:
            self.action_quit_now()
        elif choice == DRAIN and engine is not None:
            self.quit_how = "draining"
            self.notify("draining: in-flight partitions finish, then c2tui quits (q again: quit now)")

            def drain() -> None:
                done = engine.drain(timeout=self.drain_timeout)
                self.quit_how = "drained" if done else f"drain timed out after {self.drain_timeout:g}s"
                self.interrupted = not done
                self.call_from_thread(self.exit)

            self.run_worker(drain, thread=True, group="quit", name="drain")

    def action_detach(self) -> None:
        """Attached: leave; the prover and its other clients go on."""
        self.exit()

    def action_quit_now(self) -> None:
        """Ctrl-C, or quit now from the dialog: in-flight work is abandoned (recorded as such)
        and the command exits 3, as for Ctrl-C of any command (docs/exit-codes.md)."""
        self.interrupted = True
        engine = self._engine()
        if engine is not None:
            n = record_abandoned(engine, self.source.snapshot()[1], "quit now")
            self.quit_how = f"quit now ({n} in-flight partition(s) abandoned)" if n else "quit"
        self.exit()
