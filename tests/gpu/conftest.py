"""GPU tests: skipped unless CuPy is importable and a CUDA device is visible."""
from __future__ import annotations

import pytest


def _cuda_ok() -> tuple[bool, str]:
    try:
        import cupy
    except Exception as e:  # pragma: no cover - depends on the machine
        return False, f"cupy not importable ({e.__class__.__name__})"
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return False, "no CUDA device visible"
    except Exception as e:  # pragma: no cover
        return False, f"CUDA runtime unavailable ({e.__class__.__name__})"
    return True, ""


def pytest_collection_modifyitems(config, items):
    ok, why = _cuda_ok()
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.gpu)
            if not ok:
                item.add_marker(pytest.mark.skip(reason=why))
