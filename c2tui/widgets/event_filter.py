"""The event log's text filter (`/`): a note matches when the text starts a word in it, or
names the kind of event that made it. A plain substring test let `OOM` match "no room"
(r-oom), so an operator looking for OOMs got every pre-stage that found no room."""
from __future__ import annotations

import re
from typing import Any


def matcher(text: str) -> Any:
    """A predicate over log entries (t, level, text, event) for the filter `text`; case does
    not matter; an empty filter matches everything."""
    needle = text.strip().lower()
    if not needle:
        return lambda entry: True
    word = re.compile(r"(?<![0-9a-z])" + re.escape(needle), re.IGNORECASE)
    kind = needle.replace(" ", "_").replace("-", "_")

    def match(entry: tuple) -> bool:
        ev = entry[3] if len(entry) > 3 else None
        return getattr(ev, "kind", None) == kind or word.search(entry[2]) is not None

    return match
