"""`--listen PATH` for `c2tui run` and `c2tui record`: serve the prover to `c2tui attach`.

    @listen_options
    def command(listen, token_file, ...):
        server = start_listening(engine, listen, token_file, header)   # before engine.start()
        ...
        if server: server.close()
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import click
from prover import EngineHandle

F = TypeVar("F", bound=Callable[..., Any])


def listen_options(func: F) -> F:
    func = click.option("--readonly-token-file", default=None, metavar="FILE",
                        help="TCP only: a second token (created 0600 if missing) for watchers that may not steer")(func)
    func = click.option("--token-file", default=None, metavar="FILE",
                        help="TCP only: the shared token (created 0600 if missing; or $C2TUI_ATTACH_TOKEN)")(func)
    return click.option("--listen", default=None, metavar="PATH",
                        help="serve events + controls to `c2tui attach PATH` (a Unix socket, 0600; "
                             "or tcp://127.0.0.1:PORT with a token)")(func)


def start_listening(engine: EngineHandle, listen: str | None, token_file: str | None, header: dict | None = None,
                    readonly_token_file: str | None = None) -> Any:
    """An AttachServer serving `engine` at `listen` (None: no server). Bad or busy address -> exit 2."""
    if listen is None:
        return None
    from prover import AttachError, parse_address, server_token
    from prover import AttachServer

    try:
        addr = parse_address(listen)
        token = server_token(token_file) if addr.tcp else None
        ro = server_token(readonly_token_file, env=False) if addr.tcp and readonly_token_file else None
        if ro is not None and ro == token:
            raise AttachError("the read-only token must differ from the full token (--token-file / $C2TUI_ATTACH_TOKEN)")
        return AttachServer(engine, addr, header=header, token=token, readonly_token=ro).start()
    except AttachError as exc:
        raise click.UsageError(str(exc)) from None
