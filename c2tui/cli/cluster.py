"""`--cluster local:N | ADDRESS` for `run` and `record`: the engine is a fleet on Ray.

Without the option the command builds the one-host Engine exactly as before and Ray is never
imported (prover.fleet is imported only here, only when --cluster is given).
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import click

from prover import EngineHandle, RunConfig

F = TypeVar("F", bound=Callable[..., Any])


def cluster_option(func: F) -> F:
    return click.option(
        "--cluster", default=None, metavar="local:N|ADDRESS",
        help="run a fleet on Ray: local:N starts N nodes on this machine (loopback), ADDRESS joins a "
             "running Ray cluster; one host engine per node (needs pip install 'c2tui[fleet]')")(func)


def make_engine(cfg: RunConfig, cluster: str | None) -> EngineHandle:
    """The one-host Engine, or a FleetEngine over the cluster; click errors for bad input."""
    from prover import BackendError, ConfigError, Engine

    if cluster is None:
        try:
            return Engine(cfg)
        except BackendError as exc:  # the run cannot start here: exit 3 (c2tui/cli/exits.py)
            from c2tui.cli.exits import RUN, fail

            fail(str(exc), RUN)
        except ConfigError as exc:  # a setting this host cannot have (class_gpus naming a GPU it lacks): 2
            raise click.UsageError(str(exc)) from None
    from prover import ClusterError, parse_cluster

    try:
        parse_cluster(cluster)
    except ClusterError as exc:
        raise click.BadParameter(str(exc).removeprefix("--cluster: "), param_hint="--cluster") from None
    from prover import FleetEngine

    try:
        return FleetEngine(cfg, cluster)
    except ClusterError as exc:
        from c2tui.cli.exits import RUN, fail

        fail(str(exc), RUN)  # the cluster could not start: the run cannot start (3)
