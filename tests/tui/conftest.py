from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
RECORDINGS = HERE / "recordings"


@pytest.fixture
def recording() -> Path:
    """The small committed recording the snapshot tests replay."""
    return RECORDINGS / "two_gpus.jsonl"
