"""Session-wide test settings."""
from __future__ import annotations

import os
import tempfile

# the dashboard keeps its theme and layout in the user's config dir (c2tui/prefs.py): tests,
# and the commands they run in subprocesses, keep theirs in a directory of their own instead
os.environ.setdefault("C2TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="c2tui-test-prefs-"))
