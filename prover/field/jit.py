"""numba's njit for every host kernel, with its on-disk cache where numba can keep one.

`njit(cache=True)` raises at import ("cannot cache function ...: no locator available") for
a user who can write neither beside the sources (site-packages) nor in a user cache
directory: `verify` and `prove` failed for such a user (issue 35). Here the cache is probed
once, with a function of this package, before any kernel is decorated; where there is no
place for it, the kernels compile without one (slower start-ups, same results) and that is
said once, with how to give numba a place (NUMBA_CACHE_DIR).
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from numba import njit as _njit

log = logging.getLogger("prover.numba")
_cache: bool | None = None
reason: str | None = None  # why the cache is off (None: it is on, or not probed yet)


def _probe_kernel() -> int:  # a function in this package's tree: where every kernel's cache would go
    return 0


def cache_on() -> bool:
    """Whether numba can cache here (probed once; the first False is logged)."""
    global _cache, reason
    if _cache is None:
        from numba.core.caching import FunctionCache

        try:
            FunctionCache(_probe_kernel)  # finds (or fails to find) a writable locator, as each kernel would
            _cache = True
        except (RuntimeError, OSError) as exc:
            _cache, reason = False, str(exc)
            log.warning("c2tui: numba cannot cache compiled kernels here (%s); compiling them without a cache "
                        "(set NUMBA_CACHE_DIR to a writable directory to keep them)", exc)
    return _cache


def njit(**options: Any) -> Callable[[Any], Any]:
    """numba.njit(**options), cached when cache_on() (a caller's own `cache` is not asked for:
    whether a cache can be written is decided here, once)."""
    options.pop("cache", None)
    return _njit(cache=cache_on(), **options)
