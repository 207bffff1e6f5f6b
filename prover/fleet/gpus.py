"""One GPU per node of a local cluster on the cuda backend: node i gets GPU i of this machine.

Ray's GPU resource is bookkeeping: on a one-machine cluster each node that declares num_gpus=1
numbers its GPU 0, and Ray would set CUDA_VISIBLE_DEVICES=0 in every node's actors. So the
fleet tells Ray to leave CUDA_VISIBLE_DEVICES alone (NOSET_ENV in the workers' environment) and
each host actor pins its own GPU (`pin`) before anything in its process initialises CUDA.

The driver counts the machine's GPUs without initialising CUDA (it must not hold a context on
GPU 0): CUDA_VISIBLE_DEVICES when set (what CUDA itself would show this process), else NVML.
"""
from __future__ import annotations

import os
from typing import Mapping

NOSET_ENV = "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"
VISIBLE = "CUDA_VISIBLE_DEVICES"


def _from_env(value: str) -> list[str]:
    """CUDA_VISIBLE_DEVICES's devices: CUDA stops at the first invalid entry ('-1' hides all)."""
    out: list[str] = []
    for s in (x.strip() for x in value.split(",")):
        if not s or s.startswith("-"):
            break
        out.append(s)
    return out


def _nvml_count() -> tuple[int, str]:
    """(GPUs NVML sees, why 0 when it cannot tell); NVML never creates a CUDA context."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as exc:  # no nvidia-ml-py, no driver
        return 0, f"NVML unavailable: {type(exc).__name__}: {exc}"
    try:
        return int(pynvml.nvmlDeviceGetCount()), ""
    finally:
        pynvml.nvmlShutdown()


def machine_gpus(env: Mapping[str, str] | None = None) -> tuple[list[str], str]:
    """(this machine's GPUs as CUDA_VISIBLE_DEVICES entries, where that came from)."""
    env = os.environ if env is None else env
    if VISIBLE in env:
        return _from_env(env[VISIBLE]), f"{VISIBLE}={env[VISIBLE]!r}"
    n, why = _nvml_count()
    return [str(i) for i in range(n)], why or "NVML"


def local_devices(nodes: int, gpus: list[str], source: str) -> list[str]:
    """The CUDA_VISIBLE_DEVICES value of node 0..nodes-1 (one GPU each); refused when the
    machine has fewer GPUs than nodes."""
    from prover.fleet.errors import ClusterError

    if nodes > len(gpus):
        raise ClusterError(f"--cluster local:{nodes} with the cuda backend needs {nodes} GPUs (one per node); "
                           f"this machine has {len(gpus)} ({source})")
    return gpus[:nodes]


def pin(device: str) -> None:
    """Make `device` the only GPU this process sees (as CUDA device 0). Must run before CUDA is
    initialised here: CuPy is imported lazily in prover/, so a fresh actor process has not (the
    host reports the PCI bus id it then opened, `pci_bus_id`, so a pin that did not take shows)."""
    os.environ[VISIBLE] = device


def pci_bus_id() -> str | None:
    """PCI bus id of CUDA device 0 of this process (the pinned GPU), None without CuPy/CUDA."""
    try:
        import cupy

        return str(cupy.cuda.Device(0).pci_bus_id)
    except Exception:
        return None
