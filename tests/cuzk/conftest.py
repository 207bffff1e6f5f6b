"""A sim prover served over cuzk's wire: real proofs of the 2^8 circuit, small and quick."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import grpc
import pytest

from prover.config import load_config
from prover.cuzk.server import CuzkServer
from prover.cuzk.service import Stub
from prover.pipeline.engine import Engine


def make_served(tmp: Path, cache: Path, serve_only: bool = True, address: str | None = None, **kw: Any) -> tuple:
    base = dict(backend="sim", profile="tiny", constraints_log2=8, partitions=2, workers_per_gpu=1,
                time_scale=0.05, cache_dir=str(cache), insecure_seeded_setup=True)
    base.update(kw.pop("config", {}))
    events: list = []
    eng = Engine(load_config(None, **base), [events.append])
    if serve_only:
        eng.serve_only()
    srv = CuzkServer(eng, address or f"unix://{tmp}/cuzk.sock", **kw).start()
    eng.start()
    return eng, srv, events


@pytest.fixture(scope="session")
def key_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cuzk-keys")


@pytest.fixture
def served(tmp_path: Path, key_cache: Path) -> Iterator[tuple]:
    eng, srv, events = make_served(tmp_path, key_cache)
    channel = grpc.insecure_channel(srv.target)
    yield eng, srv, Stub(channel), events
    channel.close()
    srv.close()
    eng.stop(timeout=20)
