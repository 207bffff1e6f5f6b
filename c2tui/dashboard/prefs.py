"""The dashboard's preferences kept between sessions: the theme (`t`) and the layout (`h`: the
history in the partitions' place), in the user's config directory (platformdirs, which
Textual brings: ~/.config/c2tui/prefs.json on Linux; C2TUI_CONFIG_DIR overrides it).

Read leniently (a missing, unreadable or hand-broken file, a FIFO or a device in its place,
or a theme that no longer exists, gives the defaults: preferences never stop the dashboard) and written whole (a temporary
beside it, then renamed), quietly skipped where the directory cannot be written."""
from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

FILE = "prefs.json"
MAX_BYTES = 64 << 10


class Prefs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    theme: str = "dark"
    history_first: bool = False


def config_dir() -> Path:
    env = os.environ.get("C2TUI_CONFIG_DIR", "").strip()
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_config_dir("c2tui", appauthor=False))


def load(where: Path | None = None) -> Prefs:
    import themes

    from prover import InputError, open_input

    path = (where or config_dir()) / FILE
    try:  # as every input: a regular file only (a FIFO there once hung every dashboard at start)
        with open_input(path, "preferences") as fh:
            raw = fh.read(MAX_BYTES + 1)
        p = Prefs.model_validate_json(raw) if len(raw) <= MAX_BYTES else Prefs()
    except (OSError, InputError, ValidationError, ValueError):
        return Prefs()
    return p if p.theme in themes.names() else p.model_copy(update={"theme": "dark"})


def save(p: Prefs, where: Path | None = None) -> bool:
    """True when written; False where it could not be (read-only home, no space)."""
    d = where or config_dir()
    tmp = d / f".{FILE}.{os.getpid()}.tmp"
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp.write_text(p.model_dump_json(indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, d / FILE)
        return True
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False
