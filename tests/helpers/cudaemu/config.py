"""The emulator's knobs, one mutable object (`config`) read at each build and launch; each has an
environment default so that a whole test run can be switched (e.g. CUDAEMU_SCHEDULE=shuffle)."""
from __future__ import annotations

import collections
import os
from dataclasses import dataclass, field
from pathlib import Path

SCHEDULES = ("forward", "reverse", "shuffle")


def _default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("CUDAEMU_CACHE", str(Path(base) / "c2tui" / "cudaemu")))


@dataclass
class Config:
    # The order fibers run in between barriers, and the order of blocks. A race-free kernel gives
    # the same result under every one; "shuffle" draws a new order each sweep from `seed`.
    schedule: str = field(default_factory=lambda: os.environ.get("CUDAEMU_SCHEDULE", "forward"))
    seed: int = field(default_factory=lambda: int(os.environ.get("CUDAEMU_SEED", "1")))
    # g++ flags for the kernel libraries. sanitize="undefined": -fsanitize=undefined (UB in the
    # kernels' host build is reported on stderr: shifts past the width, signed overflow,
    # misaligned loads). sanitize="address": -fsanitize=address, with device arrays allocated at
    # their exact size, so that out-of-bounds accesses are reported; needs the runtime preloaded:
    #   CUDAEMU_SANITIZE=address ASAN_OPTIONS=detect_leaks=0 \
    #   LD_PRELOAD=$(g++ -print-file-name=libasan.so) python -m pytest tests/unit/test_cuda_emulated.py
    opt: str = field(default_factory=lambda: os.environ.get("CUDAEMU_OPT", "-O2"))
    sanitize: str = field(default_factory=lambda: os.environ.get("CUDAEMU_SANITIZE", ""))
    cache_dir: Path = field(default_factory=_default_cache)
    # device memory as memGetInfo reports it; an allocation past `memory_total` live bytes raises
    # cupy.cuda.memory.OutOfMemoryError (set it low to take a wrapper's out-of-memory path)
    memory_total: int = 80 << 30
    # the byte cupy.empty fills with (a GPU's fresh allocation is garbage); None: leave numpy's
    poison: int | None = 0xA5
    # kernel name -> launches in this process (tests compare copies to see which kernels a path ran)
    launches: collections.Counter = field(default_factory=collections.Counter)

    def order(self) -> int:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"CUDAEMU_SCHEDULE must be one of {SCHEDULES}, got {self.schedule!r}")
        return SCHEDULES.index(self.schedule)


config = Config()
