"""Which keys the footer shows at a width, and in what words: pure, so it is tested at every
width without a terminal.

The footer first lays out every key as Textual's Footer does. Where that does not fit, it
takes this plan: keys that go together as one item ("← → seek 5s", "+ - workers", "s f g w
sort/filter"), short words ("lock", "sync", "pause"), and where even that does not fit, the
least needed items left out in rank order and the help key named for them ("? all keys"):
never a word cut, and every key reachable (in the footer, or named by `?`, whose screen
lists them all). Widths: a footer item is its key, a space, its words, two more spaces
(Textual's FooterKey padding): len(keys) + len(words) + 3.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

FIRST = ("dismiss", "quit", "detach", "help", "app.help")
HELP = ("help", "app.help")
# lower ranks stay longer; the way out and the help never go
RANK = {"dismiss": 0, "quit": 0, "detach": 0, "help": 0, "app.help": 0, "play": 1, "pause": 1, "lock_mode": 1,
        "mem_sync": 1, "seek 5s": 2, "submit": 2, "workers": 2, "prestage": 3, "b_g2": 3, "speed": 3, "events": 3,
        "submit_winning": 4, "job": 4, "history": 4, "start/end": 5, "sort/filter": 5, "theme": 6,
        "select": 3, "page": 3, "scroll": 3}  # moving about: keys everyone knows
SHORT = {"lock mode": "lock", "mem_sync": "sync", "pause/resume": "pause", "play/pause": "play",
         "submit sector": "submit", "job action": "job", "b_g2 cpu/gpu": "b_g2", "start/end": "ends",
         "sort/filter": "sort", "seek 5s": "seek", "help": "help"}  # the rest are short already
MORE = "all keys"  # what the help key says when items were left out


@dataclass(frozen=True)
class Item:
    keys: str  # as shown: "q", "← →", "s f g w"
    key: str  # the first binding's key (a click presses it)
    action: str
    words: str
    rank: float = 5  # 0: never left out; a focused panel's own keys 0.5
    disabled: bool = False
    tooltip: str = ""

    @property
    def short(self) -> str:
        return SHORT.get(self.words, self.words)

    def width(self, short: bool = False) -> int:
        return len(self.keys) + len(self.short if short else self.words) + 3


def order(items: list[Item]) -> list[Item]:
    """The way out and the help first (a narrow terminal keeps them), the rest as bound."""
    first = sorted((i for i in items if i.action in FIRST), key=lambda i: FIRST.index(i.action))
    return first + [i for i in items if i.action not in FIRST]


def plan(items: list[Item], width: int) -> tuple[list[Item], int]:
    """(the items to show, their words set, in order; how many were left out)."""
    items = order(items)
    for short in (False, True):
        if sum(i.width(short) for i in items) <= width:
            return [replace(i, words=i.short) if short else i for i in items], 0
    shown = [replace(i, words=i.short) for i in items]
    help_at = next((n for n, i in enumerate(shown) if i.action in HELP), None)
    if help_at is not None:
        shown[help_at] = replace(shown[help_at], words=MORE)
    dropped = 0
    for victim in sorted(shown, key=lambda i: (-i.rank, -shown.index(i))):
        if sum(i.width() for i in shown) <= width:
            break
        if victim.rank == 0:
            continue  # the way out and the help stay, whatever the width
        shown.remove(victim)
        dropped += 1
    if not dropped and help_at is not None:  # nothing left out after all: plain "help"
        shown = [replace(i, words=SHORT["help"]) if i.action in HELP else i for i in shown]
    return shown, dropped
