"""On a real local Ray cluster: local:2 on the cuda backend declares one GPU per node and each
host actor runs with its own CUDA_VISIBLE_DEVICES (node i: GPU i), not Ray's numbering (which
gives every node of a one-machine cluster GPU 0). The engines are sim (no GPU here); what is
checked is the GPU each host's process would open."""
from __future__ import annotations

import time

import pytest

pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("warm_numba_cache")  # Ray hosts load the kernels, never compile them on the clock

from prover.fleet.cluster import Cluster  # noqa: E402


@pytest.mark.slow
def test_local2_cuda_gives_each_node_its_own_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")  # "this machine has two GPUs"
    cluster = Cluster("local:2", "cuda")
    try:
        nodes = [n for n in cluster.nodes() if n.alive]
        assert [n.gpus for n in nodes] == [1, 1]
        assert sorted(cluster.device_of.values()) == ["0", "1"]
        assert cluster.device_of[cluster.local.head_node.node_id] == "0"
        cfg = {"backend": "sim", "gpus": 1, "constraints_log2": 8, "workers_per_gpu": 1, "sectors": None}
        actors = {n.node_id: cluster.spawn_host(n, 1, f"h{i}", n.node_id[:8], cfg, i, time.time(),
                                                cuda_device=cluster.device_of[n.node_id])
                  for i, n in enumerate(nodes)}
        infos = {nid: cluster.ray.get(a.start.remote(), timeout=180) for nid, a in actors.items()}
        for nid, info in infos.items():
            assert info.cuda_device == cluster.device_of[nid]  # what the actor process sees at start()
            assert info.gpus == 1
        assert len({i.pid for i in infos.values()}) == 2
        for a in actors.values():
            cluster.ray.get(a.stop.remote(), timeout=60)
    finally:
        cluster.shutdown()
