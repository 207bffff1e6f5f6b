"""How a knob change reaches the fleet's hosts: the joined ones now, the starting ones when
they join.

A host is spawned with the fleet's knobs as they are then (FleetEngine._host_config) and joins
once its engine is up, seconds later (a minute on a loaded node). A fleet-wide change made in
between used to reach nobody: the joined hosts were none, and the starting one had its config
already, so `--switch 0.05:vram_budget=20GiB` was silently lost. Now the change waits on each
starting host (`pending`) and is sent, in order and with its source, when that host joins; its
Controller records the ModeChange there as for any other change.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

from prover.knobs import KNOBS

GUARD_WAIT_S = 10.0  # a guarded knob (one a host may refuse) waits this long for the hosts' answers


class Host(Protocol):
    """The driver's handle on one host actor (prover.fleet.driver.Host)."""

    name: str
    actor: Any
    info: Any  # HostInfo once joined (its gpu_offset), else None
    pending: list[tuple[str, Any, str]]  # knob changes made while it started


class Fleet(Protocol):
    """What a knob send reads of the driver (prover.fleet.driver.FleetEngine)."""

    sched: Any  # the Scheduler: its `slots`, GPU -> the host that has it
    cluster: Any

    # read-only views (Mapping, Sequence): the driver's dict and list of its own Host dataclass fit
    def joined(self) -> Mapping[str, Host]: ...  # a copy: the hosts that joined, by name
    def starting(self) -> Sequence[Host]: ...  # the hosts spawned and not joined yet


def send(fleet: Fleet, knob: str, value: Any, source: str, target: str | None) -> None:
    """One knob to every host (None), one host ('h1') or one GPU ('gpu3', fleet number). The
    caller holds fleet.knob_lock, so a host is either joined (sent now) or starting (pending)."""
    hosts = fleet.joined()
    gpu = None
    if target is None:
        chosen = list(hosts.values())
        for h in fleet.starting():  # hosts still starting take it when they join
            if h.name not in hosts:
                h.pending.append((knob, value, source))
    elif target in hosts:
        chosen = [hosts[target]]
    elif target.startswith("gpu") and target[3:].isdigit() and int(target[3:]) in fleet.sched.slots:
        gpu = int(target[3:])
        chosen = [hosts[fleet.sched.slots[gpu].host]]
    else:
        raise ValueError(f"no host or GPU {target!r} in the fleet (hosts: {', '.join(sorted(hosts)) or 'none yet'}; "
                         f"GPUs: gpu0..gpu{max(fleet.sched.slots, default=0)})")
    refs = []
    for h in chosen:
        local = None if gpu is None else gpu - (h.info.gpu_offset if h.info else 0)
        refs.append(h.actor.control.remote(knob, value, source, local))
    if KNOBS[knob].guard is not None:
        _refused(fleet, refs)


def catch_up(host: Host) -> None:
    """The changes made while `host` started, sent in order now it has joined (under
    fleet.knob_lock; fire and forget: a guarded knob it refuses is said in its own events)."""
    pending, host.pending = host.pending, []
    for knob, value, source in pending:
        host.actor.control.remote(knob, value, source, None)


def _refused(fleet: Fleet, refs: list) -> None:
    """A host's refusal of a guarded knob (host_ram_budget below its key in use), raised here
    so the fleet's knob does not claim a value the hosts did not take. A host that is slow or
    lost past GUARD_WAIT_S is not waited for: its own events say what it did."""
    try:
        fleet.cluster.ray.get(refs, timeout=GUARD_WAIT_S)
    except ValueError as exc:  # Ray's RayTaskError is also the cause's class
        raise ValueError(str(getattr(exc, "cause", None) or exc).splitlines()[-1]) from None
    except Exception:  # noqa: BLE001 - a timeout or a lost actor: not a refusal
        return
