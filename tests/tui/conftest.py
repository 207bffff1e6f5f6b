from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
RECORDINGS = HERE / "recordings"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def recording() -> Path:
    """The small committed recording the snapshot tests replay."""
    return RECORDINGS / "two_gpus.jsonl"
