"""What a fleet run of bench_fleet_native.py does in its steady window (issue 27), and what is
read back from its events afterwards. Plain functions over a started FleetEngine and its list
of events (all on the driver's clock, `eng.now()`):

    windows = attached(eng, sock, screen, server, seconds)   # A | B: dashboard attached | A
    windows = kill_node(eng, events, seconds)               # a worker node removed mid-run
    rate(events, t0, t1)                                     # verified partitions/min in (t0, t1]
    exactly_once(events)                                     # each partition done once, requeued ones too
    gpu_table(rows)                                          # the RESULTS table, per run and GPU

The dashboard is the real one in its own process (bench_attach_native.Client: `c2tui attach
SOCK` on a 200x60 pty, 10 Hz) against the fleet's attach server (c2tui.cli.listen, as `record
--cluster ... --listen` wires it). Its cost: B's rate against the mean of the two A windows
around it, in one run (one cluster start-up, no drift between separate runs).
"""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any


def rate(events: list[Any], t0: float, t1: float) -> float:
    """Verified partitions a minute finished in (t0, t1] (driver clock)."""
    n = sum(1 for e in events if e.kind == "partition_done" and e.ok and t0 < e.t <= t1)
    return 60.0 * n / (t1 - t0) if t1 > t0 else 0.0


def _window(events: list[Any], name: str, t0: float, t1: float) -> dict[str, Any]:
    return {"window": name, "t0": round(t0, 2), "t1": round(t1, 2), "verified_per_min": round(rate(events, t0, t1), 1)}


def attached(eng: Any, events: list[Any], client_cls: Any, server: Any, sock: Path, screen: Path,
             seconds: float) -> dict[str, Any]:
    """A ninth of `seconds` to settle, then a third without a client, a third with the
    dashboard attached (after it connected and drew), a third after it detached. Returns the
    windows and the cost."""
    third = seconds / 3
    eng.wait(third / 3)  # past the first partitions' ramp: A1 is as steady as A2
    a1 = eng.now()
    eng.wait(third)
    a1_end = eng.now()
    client = client_cls(sock, screen)
    client.wait_ready(server)  # connected, a screenful drawn, then 1 s: its start-up is outside B
    cpu0, drawn0, b0 = client.cpu_s(), client.drawn(), eng.now()
    eng.wait(third)
    b1 = eng.now()
    cpu, drawn = client.cpu_s() - cpu0, client.drawn() - drawn0
    dropped = [list(d) for d in server.dropped]
    exit_code = client.quit()
    a2 = eng.now()
    eng.wait(third)
    a2_end = eng.now()
    w = [_window(events, "A1", a1, a1_end), _window(events, "B attached", b0, b1),
         _window(events, "A2", a2, a2_end)]
    base = (w[0]["verified_per_min"] + w[2]["verified_per_min"]) / 2
    return {"windows": w, "client_cpu_s": round(cpu, 2), "client_bytes_drawn": drawn, "client_dropped": dropped,
            "client_exit": exit_code,
            "dashboard_cost_pct": round(100.0 * (1 - w[1]["verified_per_min"] / base), 2) if base else None}


def kill_node(eng: Any, events: list[Any], seconds: float) -> dict[str, Any]:
    """Half of `seconds`, then a worker node (not the driver's) with work pending there is
    removed from the local cluster (its raylet and host process die), then the other half."""
    eng.wait(seconds / 2)
    workers = {n.node_id: n for n in eng.cluster.local.worker_nodes}
    with eng._plock:  # the driver thread places under it
        busy = sorted({eng.sched.host_of(p) for p in list(eng.sched.where)} - {None})
        hosts = {name: h.node for name, h in eng.hosts.items()}
    victims = [h for h in busy if hosts.get(h) in workers] or [h for h, n in hosts.items() if n in workers]
    if not victims:
        return {"killed": None, "why": "no worker node with a host (local:1?)"}
    victim = victims[0]
    pending = len([p for p in list(eng.sched.where) if eng.sched.host_of(p) == victim])
    t_kill = eng.now()
    eng.cluster.local.remove_node(workers[hosts[victim]])
    end = time.monotonic() + 60
    while not any(e.kind == "host_left" and e.host == victim for e in events[-5000:]) and time.monotonic() < end:
        time.sleep(0.1)
    t_left = eng.now()
    eng.wait(max(0.0, seconds / 2 - (t_left - t_kill)))
    return {"killed": victim, "pending_at_kill": pending, "t_kill": round(t_kill, 2),
            "host_left_after_s": round(t_left - t_kill, 2)}


def exactly_once(events: list[Any]) -> dict[str, Any]:
    """From a fleet's events (its recording): every partition done at most once; each one a
    lost host had (HostLeft.requeued) queued again and done once, on another host, after the
    loss; everything that started is done (the drain waits for what is in flight)."""
    done = Counter(e.part for e in events if e.kind == "partition_done")
    done_at = {e.part: (e.t, e.host, e.ok) for e in events if e.kind == "partition_done"}
    started = {e.part for e in events if e.kind == "phase_start"}
    lost = [e for e in events if e.kind == "host_left" and e.lost]
    requeued = [(p, e.host, e.t) for e in lost for p in e.requeued]
    bad_requeue = [p for p, h, t in requeued if p not in done_at or done_at[p][1] == h or done_at[p][0] < t]
    never_done = sorted(started - set(done))
    out = {"partitions_done": len(done), "done_twice": sorted(p for p, n in done.items() if n > 1),
           "hosts_lost": [e.host for e in lost], "requeued": len(requeued),
           "requeued_not_done_elsewhere_after": bad_requeue, "started_never_done": never_done[:20],
           "failed": sorted(p for p, (_, _, ok) in done_at.items() if not ok)[:20]}
    out["ok"] = not (out["done_twice"] or bad_requeue or never_done or out["failed"])
    return out


def gpu_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown: per run and GPU, the run's rate and ratio to local:1, held share, NVML util."""
    one = next((r["steady_verified_per_min"] for r in rows if r.get("nodes") == 1 and not r.get("skipped")), None)
    out = ["| run | GPUs | verified/min (steady) | x local:1 | host | GPU (PCI) | its verified/min | "
           "compute held (steady) | NVML util (steady) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("skipped"):
            out.append(f"| {r['cluster']} | - | skipped ({r.get('why', 'no time')}) | | | | | | |")
            continue
        ratio = f"{r['steady_verified_per_min'] / one:.2f}x" if one else "-"
        hosts = {h["host"]: h for h in r["hosts"]}
        for i, g in enumerate(r["gpus"]):
            h = next((h for h in hosts.values() if g["gpu"] in h.get("gpus", [])), {})
            lead = (f"| {r['name']} | {r['nodes']} | {r['steady_verified_per_min']:.1f} | {ratio} "
                    if i == 0 else "| | | | ")
            held = "-" if g["steady_held_share"] is None else f"{g['steady_held_share']:.1%}"
            util = "-" if g["steady_util_mean"] is None else f"{g['steady_util_mean']:.0%}"
            out.append(f"{lead}| {h.get('host', '?')} | gpu{g['gpu']} ({h.get('pci_bus_id') or '-'}) | "
                       f"{h.get('throughput_per_min', 0):.1f} | {held} | {util} |")
    return out
