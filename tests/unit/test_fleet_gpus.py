"""A local cluster on the cuda backend gives node i GPU i of this machine (prover.fleet.gpus):
the mapping, the refusal of more nodes than GPUs, and the host pinning its GPU. No GPU needed."""
from __future__ import annotations

import os
import time

import pytest

from prover.fleet import gpus
from prover.fleet.cluster import Cluster, ClusterError


def test_gpus_from_cuda_visible_devices():
    assert gpus.machine_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == (["2", "3"], "CUDA_VISIBLE_DEVICES='2,3'")
    assert gpus.machine_gpus({"CUDA_VISIBLE_DEVICES": "GPU-ab12, GPU-cd34"})[0] == ["GPU-ab12", "GPU-cd34"]
    assert gpus.machine_gpus({"CUDA_VISIBLE_DEVICES": "0,-1,1"})[0] == ["0"]  # CUDA stops at an invalid entry
    assert gpus.machine_gpus({"CUDA_VISIBLE_DEVICES": ""})[0] == []


def test_gpus_from_nvml_when_not_restricted(monkeypatch):
    monkeypatch.setattr(gpus, "_nvml_count", lambda: (2, ""))
    assert gpus.machine_gpus({}) == (["0", "1"], "NVML")
    monkeypatch.setattr(gpus, "_nvml_count", lambda: (0, "NVML unavailable: no driver"))
    assert gpus.machine_gpus({}) == ([], "NVML unavailable: no driver")


def test_node_i_gets_gpu_i():
    assert gpus.local_devices(1, ["0", "1"], "NVML") == ["0"]
    assert gpus.local_devices(2, ["0", "1"], "NVML") == ["0", "1"]
    assert gpus.local_devices(2, ["5", "7", "9"], "x") == ["5", "7"]


def test_more_nodes_than_gpus_is_refused_naming_both():
    with pytest.raises(ClusterError) as err:
        gpus.local_devices(3, ["0", "1"], "NVML")
    msg = str(err.value)
    assert "local:3" in msg and "needs 3 GPUs" in msg and "has 2" in msg


def test_cluster_refuses_before_starting_ray(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    with pytest.raises(ClusterError, match=r"needs 2 GPUs .* has 1 \(CUDA_VISIBLE_DEVICES='0'\)"):
        Cluster("local:2", "cuda")


def test_host_pins_its_gpu_before_its_engine(monkeypatch):
    from prover.fleet.host import HostRuntime

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    cfg = {"backend": "sim", "gpus": 1, "constraints_log2": 8, "workers_per_gpu": 1}
    h = HostRuntime("h1", "n1", cfg, 1, time.time(), cuda_device="1")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    assert h.config.n_gpus == 1
