"""Serve cuzk.v1.ProvingEngine over a running engine (grpcio), within bounds.

    server = CuzkServer(engine, "unix:///run/c2tui/cuzk.sock").start()   # before engine.start()
    server.close()

Who may call: a Unix socket is created 0600 (owner only, as `--listen`); TCP is loopback
only and every call carries `authorization: Bearer TOKEN` metadata: the full token may do
anything, the read-only token (another file) only AwaitProof, GetStatus and GetMetrics; a
server made `readonly` refuses the rest to everyone. `no_token=True` serves loopback TCP to
any local process without one (Curio sends no metadata), said where it is set.

Bounds: a message of at most `max_message` bytes (cuzk's 256 MiB is the most allowed; 64 MiB by
default: a request is seed bytes here), at most MAX_RPCS calls at once (more are answered
RESOURCE_EXHAUSTED by grpc itself), at most `max_jobs` jobs open. A waiting client holds one
handler thread and nothing of the prover: the engine's sinks are the job table's dict
updates and the fold's deque append; a client that goes away mid-wait is noticed within
0.5 s (a Prove's job is then cancelled: nobody is left to take its proof).
"""
from __future__ import annotations

import hmac
import os
import socket
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

from prover.cuzk.address import AddressError, GrpcAddress, parse_grpc_address
from prover.cuzk.jobs import JobTable
from prover.cuzk.servicer import Servicer
from prover.cuzk.service import SERVICE, generic_handler

MAX_RPCS = 64
DEFAULT_MAX_MESSAGE = 64 << 20
CUZK_MAX_MESSAGE = 256 << 20  # what cuzk and Curio allow
READ_ONLY = frozenset({"AwaitProof", "GetStatus", "GetMetrics"})
FOLD_EVERY_S = 0.25


def _refuse(code: grpc.StatusCode, text: str) -> grpc.RpcMethodHandler:
    def answer(request: Any, context: grpc.ServicerContext) -> Any:
        context.abort(code, text)
    return grpc.unary_unary_rpc_method_handler(answer)


class Access(grpc.ServerInterceptor):
    """Tokens and read-only rules, checked before a request is even parsed."""

    def __init__(self, token: str | None, readonly_token: str | None, readonly: bool) -> None:
        self.token, self.readonly_token, self.readonly = token, readonly_token, readonly

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        method = details.method.rsplit("/", 1)[-1]
        if not details.method.startswith(f"/{SERVICE}/"):
            return continuation(details)  # grpc answers UNIMPLEMENTED
        writes = method not in READ_ONLY
        if self.token is not None:
            given = dict(details.invocation_metadata or ()).get("authorization", "")
            given = given[7:] if isinstance(given, str) and given.startswith("Bearer ") else ""
            full = bool(given) and hmac.compare_digest(given.encode(), self.token.encode())
            ro = (not full and self.readonly_token is not None and bool(given)
                  and hmac.compare_digest(given.encode(), self.readonly_token.encode()))
            if not (full or ro):
                return _refuse(grpc.StatusCode.UNAUTHENTICATED,
                               "this prover takes TCP calls with 'authorization: Bearer TOKEN' metadata only")
            if ro and writes:
                return _refuse(grpc.StatusCode.PERMISSION_DENIED,
                               f"read-only client: {method} refused (AwaitProof, GetStatus, GetMetrics only)")
        if self.readonly and writes:
            return _refuse(grpc.StatusCode.PERMISSION_DENIED,
                           f"this prover serves cuzk read-only (--grpc-readonly): {method} refused")
        return continuation(details)


class Folder:
    """The fold of the engine's events the status and metrics read (a MetricsExporter's),
    drained on its own thread so the deque never grows while nobody asks."""

    def __init__(self) -> None:
        from prover.observe.metrics import MetricsExporter

        self.exporter = MetricsExporter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cuzk-fold", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(FOLD_EVERY_S):
            self.exporter.drain()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def _take_path(path: str) -> None:
    """Refuse a live server or a non-socket at path; remove a stale socket (a killed run's)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise AddressError(f"{path} exists and is not a socket: not touching it")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect(path)
        raise AddressError(f"{path}: a server is already serving there")
    except (ConnectionRefusedError, FileNotFoundError):
        os.unlink(path)
    except OSError:
        raise AddressError(f"{path}: something answers there; not taking it") from None
    finally:
        s.close()


class CuzkServer:
    def __init__(self, engine: Any, address: str | GrpcAddress | None, *, token: str | None = None,
                 readonly_token: str | None = None, readonly: bool = False, no_token: bool = False,
                 max_message: int = DEFAULT_MAX_MESSAGE, max_jobs: int = 256) -> None:
        # None: no gRPC, only what status() and serve_status() read (a /status of our own)
        self.address = parse_grpc_address(address) if isinstance(address, str) else address
        if not 1 <= max_message <= CUZK_MAX_MESSAGE:
            raise AddressError(f"--grpc-max-message {max_message}: 1 byte .. 256 MiB (cuzk's limit)")
        if self.address is not None and self.address.tcp and token is None and not no_token:
            raise AddressError("a TCP --grpc address needs a token (--grpc-token-file, or $C2TUI_ATTACH_TOKEN), "
                               "or --grpc-no-token to serve any local process (Curio sends none)")
        self.engine = engine
        self.table = JobTable()
        self.folder = Folder()
        self.servicer = Servicer(engine, self.table, self.folder.exporter, max_open_jobs=max_jobs)
        self.max_message = max_message
        tcp = self.address is not None and self.address.tcp
        self._access = Access(token if tcp else None, readonly_token if tcp else None, readonly)
        self._server: grpc.Server | None = None
        self._http: Any = None
        self.port: int | None = None

    def start(self) -> "CuzkServer":
        if self.address is None:
            self._feed()
            return self
        opts = [("grpc.max_receive_message_length", self.max_message),
                ("grpc.max_send_message_length", CUZK_MAX_MESSAGE), ("grpc.so_reuseport", 0)]
        server = grpc.server(ThreadPoolExecutor(max_workers=MAX_RPCS, thread_name_prefix="cuzk-rpc"),
                             handlers=[generic_handler(self.servicer)], interceptors=[self._access],
                             options=opts, maximum_concurrent_rpcs=MAX_RPCS)
        a = self.address
        if a.path is not None:
            _take_path(a.path)
            old = os.umask(0o177)  # the socket is never, even for an instant, open to others
            try:
                bound = server.add_insecure_port(a.target())
            finally:
                os.umask(old)
        else:
            try:
                bound = server.add_insecure_port(a.target())
            except RuntimeError:
                bound = 0
        if not bound:
            raise AddressError(f"cannot listen on {a}: in use or not allowed")
        self._feed()
        server.start()
        if a.path is not None:
            os.chmod(a.path, 0o600)
        self.port = None if a.path is not None else bound
        self._server = server
        return self

    def _feed(self) -> None:
        self.engine.add_sink(self.table.sink)
        self.engine.add_sink(self.folder.exporter.sink)
        self.folder.start()

    def status(self) -> dict:
        """cuzk's /status snapshot of this prover now (status_json.py)."""
        from prover.cuzk.status_json import status_json

        with self.folder.exporter.folding() as f:
            return status_json(f.state, self.table, getattr(self.engine, "keys", None), self.servicer.sizes,
                               self.engine.clock())

    def serve_status(self, port: int, addr: str = "127.0.0.1") -> int:
        """Serve GET /status on addr:port (0: any free port); returns the bound port."""
        from prover.cuzk.status_http import StatusHttp

        self._http = StatusHttp(self.status)
        return self._http.start(port, addr)

    @property
    def target(self) -> str:
        """What a client dials (the bound port where 0 was asked)."""
        return "" if self.address is None else self.address.target(self.port)

    def close(self, grace: float = 1.0) -> None:
        if self._http is not None:
            self._http.stop()
            self._http = None
        if self._server is not None:
            self._server.stop(grace).wait(grace + 5)
            self._server = None
        self.folder.stop()
        for sink in (self.table.sink, self.folder.exporter.sink):
            try:
                self.engine.remove_sink(sink)
            except (ValueError, KeyError):
                pass
        if self.address is not None and self.address.path is not None:
            try:
                os.unlink(self.address.path)
            except OSError:
                pass
