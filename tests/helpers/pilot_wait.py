"""Wait under Textual's pilot for a condition (poll, never a fixed sleep: CI machines are loaded)."""
from __future__ import annotations

import asyncio
from typing import Callable


async def until(pilot, cond: Callable[[], bool], timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)
