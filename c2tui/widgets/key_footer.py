"""The footer: Textual's Footer with close, quit and help always first, so a narrow
terminal (80x24) cuts the panel's and the controls' keys, never the way out or to the
help (which lists every key)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FIRST = ("dismiss", "quit", "detach", "help", "app.help")


class KeyFooter(Footer):
    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        first = [(b, enabled, tip) for (_, b, enabled, tip) in self.screen.active_bindings.values()
                 if b.show and b.action in FIRST]
        first.sort(key=lambda t: FIRST.index(t[0].action))
        done: set[str] = set()
        for b, enabled, tip in first:
            if b.action not in done:
                done.add(b.action)
                yield FooterKey(b.key, self.app.get_key_display(b), b.description, b.action,
                                disabled=not enabled, tooltip=tip).data_bind(compact=Footer.compact)
        # the rest as Footer lays them out (lazily: its key groups are `with` blocks)
        for node in super().compose():
            if not (isinstance(node, FooterKey) and node.action in done):
                yield node
