"""The footer: Textual's Footer with close, quit and help always first, so a narrow
terminal (80x24) cuts the panel's and the controls' keys, never the way out or to the
help (which lists every key)."""
from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FIRST = ("dismiss", "quit", "help", "app.help")


class KeyFooter(Footer):
    async def recompose(self) -> None:
        await super().recompose()
        keys = [c for c in self.children if isinstance(c, FooterKey) and c.action in FIRST]
        keys.sort(key=lambda c: FIRST.index(c.action))
        for key in reversed(keys):
            self.move_child(key, before=0)
