"""A synthetic fleet for TUI tests and benchmarks: tui_synth's model run on each of N hosts,
its events tagged the way a host actor tags them (prover.fleet.host.tag: host, fleet-wide GPU
and worker numbers; partitions prefixed with the host so hosts' names do not collide) and
merged in time order after the driver's own RunStarted and HostJoined events."""
from __future__ import annotations

from prover import events as ev
from prover.fleet.host import tag
from tests.helpers.tui_synth import Synth

GPUS, WORKERS = 8, 4


def host_events(seed: int, until: float, gpus: int = GPUS, **synth) -> list:
    """One host's raw events (tui_synth), without the run's start and end (the driver's)."""
    sectors = max(8, int(until * gpus / 10))  # enough work that no GPU runs dry before `until`
    return [e for e in Synth(gpus=gpus, workers_per_gpu=WORKERS, sectors=sectors, partitions=10, seed=seed,
                             **{"progress_steps": 4, **synth}).run(until)
            if e.kind not in ("run_started", "run_ended")]


def fleet_start(hosts: int, gpus: int = GPUS) -> list:
    """The driver's own first events: the run, then each host joining with its GPUs."""
    return [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="rtx5070ti-16g", proved_log2=10,
                          modelled_log2=27, gpus=0, config={"cluster": f"synthetic:{hosts}"})] + [
        ev.HostJoined(t=0.0, host=f"h{i}", node=f"n{i}", gpus=gpus, gpu_offset=gpus * i) for i in range(hosts)]


def fleet_stream(hosts: int, until: float, gpus: int = GPUS, distinct: int = 4, **synth) -> list:
    """A whole fleet's stream as the driver hands it to the sinks: every host's events tagged
    and merged in time order, after fleet_start."""
    bases = [host_events(s, until, gpus, **synth) for s in range(min(distinct, hosts))]
    evs = [e for i in range(hosts) for e in tagged(bases[i % len(bases)], i, gpus)]
    evs.sort(key=lambda e: e.t)
    return fleet_start(hosts, gpus) + evs


def tagged(batch: list, i: int, gpus: int = GPUS) -> list:
    """A batch as host i's actor sends it: host, fleet-wide GPU/worker numbers, its own partitions."""
    out = []
    for e in batch:
        t = tag(e, f"h{i}", gpus * i, 0.0)
        if getattr(t, "part", None) is not None:
            t = t.model_copy(update={"part": f"h{i}.{t.part}"})
        out.append(t)
    return out
