"""`--grpc ADDR` (and `--status-listen ADDR:PORT`) on `c2tui run` and `c2tui record`: speak
cuzk's wire (prover/cuzk, docs/cuzk.md) so Curio and cuzk's tools can use this prover.

    @grpc_options
    def command(..., **kwargs):
        engine = make_engine(cfg, cluster)
        cuzk = start_grpc(engine, kwargs)        # pops its options; None when neither is given
        ...
        stop_grpc(cuzk)
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import click
from prover import EngineHandle

F = TypeVar("F", bound=Callable[..., Any])
KEYS = ("grpc", "grpc_token_file", "grpc_readonly_token_file", "grpc_no_token", "grpc_readonly",
        "grpc_max_message", "grpc_max_jobs", "grpc_own_work", "status_listen")


def grpc_options(func: F) -> F:
    opts = [
        click.option("--grpc", default=None, metavar="ADDR",
                     help="serve cuzk.v1.ProvingEngine (Curio's cuzk daemon wire): unix:///PATH (0600) or "
                          "127.0.0.1:PORT (loopback, with a token)"),
        click.option("--grpc-token-file", default=None, metavar="FILE",
                     help="TCP: the token calls must carry (created 0600 if missing; or $C2TUI_ATTACH_TOKEN)"),
        click.option("--grpc-readonly-token-file", default=None, metavar="FILE",
                     help="TCP: a second token that may only AwaitProof, GetStatus, GetMetrics"),
        click.option("--grpc-no-token", is_flag=True,
                     help="TCP: no token (any local process may submit and cancel; Curio sends none)"),
        click.option("--grpc-readonly", is_flag=True, help="serve status only: SubmitProof, Prove, Cancel, SRS refused"),
        click.option("--grpc-max-message", default="64MiB", show_default=True, metavar="SIZE",
                     help="largest request taken (cuzk's and Curio's limit, 256MiB, at most)"),
        click.option("--grpc-max-jobs", type=click.IntRange(1, 100_000), default=256, show_default=True,
                     help="jobs queued or running at once; more are refused RESOURCE_EXHAUSTED"),
        click.option("--grpc-own-work", is_flag=True,
                     help="also prove the run's own sectors (default with --grpc: only what clients submit)"),
        click.option("--status-listen", default=None, metavar="ADDR:PORT",
                     help="serve cuzk's HTTP GET /status JSON here (e.g. 127.0.0.1:9821; port 0: any)"),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise click.BadParameter(f"{text!r}: give ADDR:PORT, e.g. 127.0.0.1:9821", param_hint="--status-listen")
    return host, int(port)


def start_grpc(engine: EngineHandle, kwargs: dict) -> Any:
    """The cuzk server for `engine` (before engine.start()), from the options popped off kwargs."""
    o = {k: kwargs.pop(k, None) for k in KEYS}
    if o["grpc"] is None and o["status_listen"] is None:
        if any(o[k] for k in KEYS if k not in ("grpc_max_message", "grpc_max_jobs")):
            raise click.UsageError("--grpc-* options need --grpc ADDR")
        return None
    from prover import AttachError, parse_bytes, server_token
    from prover import CuzkServer, parse_grpc_address

    if not hasattr(engine, "queue_position"):
        raise click.UsageError("--grpc and --status-listen serve one host's engine, not a --cluster fleet")
    try:
        addr = None if o["grpc"] is None else parse_grpc_address(o["grpc"])
        tcp = addr is not None and addr.tcp
        token = server_token(o["grpc_token_file"]) if tcp and not o["grpc_no_token"] else None
        ro = server_token(o["grpc_readonly_token_file"], env=False) if tcp and o["grpc_readonly_token_file"] else None
        if ro is not None and ro == token:
            raise AttachError("the read-only token must differ from the full token")
        max_message = parse_bytes(o["grpc_max_message"] or "64MiB")
        server = CuzkServer(engine, addr, token=token, readonly_token=ro, readonly=bool(o["grpc_readonly"]),
                            no_token=bool(o["grpc_no_token"]), max_message=max_message, max_jobs=o["grpc_max_jobs"] or 256)
        if addr is not None and not o["grpc_own_work"] and hasattr(engine, "serve_only"):
            engine.serve_only()
        server.start()
    except (AttachError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    if addr is not None:
        click.echo(f"cuzk: serving cuzk.v1.ProvingEngine at {addr.target(server.port)}"
                   + (" (no token: any local process may submit)" if tcp and token is None else ""), err=True)
    if o["status_listen"] is not None:
        host, port = _host_port(o["status_listen"])
        try:
            bound = server.serve_status(port, host)
        except OSError as exc:
            server.close()
            raise click.UsageError(str(exc)) from None
        click.echo(f"cuzk: /status at http://{host}:{bound}/status", err=True)
    return server


def stop_grpc(server: Any) -> None:
    if server is not None:
        server.close()
