"""The footer: Textual's Footer with close, quit and help always first. Where its layout does
not fit the width (80 or 120 columns cut it mid-word), it switches to a plan of whole items
(c2tui/widgets/footer_plan.py): keys that go together as one item, short words, and the
least needed items left out with `?` named for them ("? all keys"). Live, it also lists the
keys Textual's footer hides (W winning, a job action, s f g w sort/filter) where there is
room. The plan is redone when the width or the bindings change."""
from __future__ import annotations

from collections import defaultdict
from itertools import groupby
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from c2tui.widgets.footer_plan import FIRST, RANK, Item, plan

EXTRA = ("submit_winning", "job", "partitions")  # hidden by Textual (show=False), shown by this footer live
GROUPS = {"workers_up": "workers", "workers_down": "workers", "partitions": "sort/filter"}


def _base(action: str) -> str:
    return action.split("(", 1)[0]


class KeyFooter(Footer):
    planned_for: int | None = None  # the width the plan is in force for (None: Textual's layout fits)
    left_out = 0  # items the plan left out (named by `?`)

    def _live(self) -> bool:
        return not getattr(self.app, "replay", True)

    def items(self) -> list[Item]:
        """Every footer key of the screen, keys that go together as one item."""
        out: list[Item] = []
        where: dict[str, int] = {}
        for node, b, enabled, tip in self.screen.active_bindings.values():
            base = _base(b.action)
            if not (b.show or (base in EXTRA and self._live())):
                continue
            group = b.group.description if b.group is not None else GROUPS.get(base)
            tag = group or b.action
            display = self.app.get_key_display(b)
            if tag in where:
                i = out[where[tag]]
                if display not in i.keys.split(" "):
                    out[where[tag]] = Item(f"{i.keys} {display}", i.key, i.action, i.words, i.rank, i.disabled, i.tooltip)
                continue
            where[tag] = len(out)
            words = group or b.description
            # a focused panel's or a screen's own keys are what is in use now (but for moving about)
            rank = RANK.get(group or base, 5 if node is self.app else 0.5)
            out.append(Item(display, b.key.split(",")[0], b.action, words, rank, not enabled, tip or b.description))
        return out

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        width = self.size.width or self.app.size.width
        if self.textual_width() <= width:
            self.planned_for, self.left_out = None, 0
            yield from self._textual_layout()
            return
        self.planned_for = width
        shown, self.left_out = plan(self.items(), width)
        for i in shown:
            yield self._key(i)

    def textual_width(self) -> int:
        """The cells Textual's layout below takes (its CSS: a key is padded 0 1 and its words
        0 1 0 0; grouped keys have margins 0 1, which collapse between neighbours, and the
        group's label a right margin of 1), so the choice is made before anything is drawn."""
        def key(display: str, words: str) -> int:
            return len(display) + 2 + len(words) + 1 if words else len(display)

        acts: defaultdict[str, list] = defaultdict(list)
        for _, b, _, _ in self.screen.active_bindings.values():
            if b.show:
                acts[b.action].append(b)
        total, done = 0, set()
        for action in FIRST:
            if action in acts:
                done.add(action)
                total += key(self.app.get_key_display(acts[action][0]), acts[action][0].description)
        for group, multi in groupby(acts.values(), lambda m: m[0].group):
            ms = list(multi)
            if group is not None and len(ms) > 1:
                total += sum(len(self.app.get_key_display(m[0])) for m in ms) + len(ms) + 1 + len(group.description) + 1
            else:
                total += sum(key(self.app.get_key_display(m[0]), m[0].description) for m in ms if m[0].action not in done)
        if self._live():
            total += sum(i.width() for i in self.items() if _base(i.action) in EXTRA)
        return total

    def _textual_layout(self) -> ComposeResult:
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
        if self._live():  # the keys Textual hides, after the rest
            for i in (i for i in self.items() if _base(i.action) in EXTRA):
                yield self._key(i)

    def _key(self, i: Item) -> FooterKey:
        return FooterKey(i.key, i.keys, i.words, i.action, disabled=i.disabled,
                         tooltip=i.tooltip).data_bind(compact=Footer.compact)

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready:
            self.refresh(recompose=True)

    def shown(self) -> list[Any]:
        return list(self.query(FooterKey))
