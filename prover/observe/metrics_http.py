"""The /metrics HTTP server: prometheus-client's WSGI app on a threading server that keeps quiet.

prometheus-client's own `start_http_server` lets socketserver print a traceback to stderr when
a client goes away mid-answer (a scanner that sends a 70 kB URI and hangs up gets its 414
written into a closed socket). Under `record` that traceback lands in the operator's terminal
and log among the run's own lines (the dashboard's Textual swallows stderr), so any client
could write tracebacks there at will; here a handler's failure is logged at debug level
instead, and the server keeps serving.

It is bounded too, so slow clients can neither grow the process's threads nor keep a scrape
out: at most MAX_CONNECTIONS are served at once; a client has REQUEST_DEADLINE_S for its
whole request (a deadline, not a timeout per read: 40 clients dripping a header byte every
3 s once held every slot for ever); and a connection still sending its request gives its
slot to a newcomer when all are taken (the oldest such first), so a scrape, which sends its
few lines at once, always gets one.
"""
from __future__ import annotations

import io
import logging
import socket
import threading
import time
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

log = logging.getLogger(__name__)
REQUEST_DEADLINE_S = 5.0  # a scrape's request is one short line and a few headers, sent at once
READ_TIMEOUT_S = REQUEST_DEADLINE_S  # also each send of the answer's (the socket's timeout)
MAX_CONNECTIONS = 32  # Prometheus scrapes one at a time; this leaves room for curl and a second scraper


class _DeadlineRaw(io.RawIOBase):
    """A connection's reads, all within one deadline (each recv gets the time left)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request's deadline passed")
        self.sock.settimeout(left)
        return self.sock.recv_into(b)


class _QuietHandler(WSGIRequestHandler):
    timeout = READ_TIMEOUT_S  # socketserver sets it on the connection: a silent client is dropped

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # socketserver's reader: one with the request's deadline instead
        self.rfile = io.BufferedReader(_DeadlineRaw(self.connection, time.monotonic() + REQUEST_DEADLINE_S))

    def parse_request(self) -> bool:
        ok = super().parse_request()
        self.server.request_read(self.request)  # type: ignore[attr-defined]  # its slot is no longer given away
        return ok

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """No access log on stderr (the dashboard owns the terminal)."""


class _Slots:
    """MAX_CONNECTIONS slots; one whose client is still sending its request is given to a
    newcomer when none is free (the oldest first: its socket is shut, its thread unwinds)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.busy = 0
        self.reading: dict[Any, float] = {}  # connections still sending their request, oldest first
        self.given: set[Any] = set()  # connections whose slot went to a newcomer
        self.lock = threading.Lock()

    def take(self, conn: Any) -> bool:
        with self.lock:
            if self.busy >= self.n and self.reading:
                oldest = next(iter(self.reading))
                del self.reading[oldest]
                self.given.add(oldest)
                self.busy -= 1
                try:
                    oldest.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            if self.busy >= self.n:
                return False
            self.busy += 1
            self.reading[conn] = time.monotonic()
            return True

    def read(self, conn: Any) -> None:
        with self.lock:
            self.reading.pop(conn, None)

    def give_back(self, conn: Any) -> None:
        with self.lock:
            self.reading.pop(conn, None)
            if conn in self.given:
                self.given.discard(conn)
            else:
                self.busy -= 1


def _server_class(addr: str, port: int) -> type[ThreadingWSGIServer]:
    """A server class bound to addr's family (an IPv6 literal or name needs AF_INET6)."""
    family = socket.getaddrinfo(addr or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]

    class Server(ThreadingWSGIServer):
        address_family = family
        slots = _Slots(MAX_CONNECTIONS)

        def process_request(self, request: Any, client_address: Any) -> None:
            if not self.slots.take(request):
                log.debug("metrics client %s: refused, %d connections answering", client_address, MAX_CONNECTIONS)
                self.shutdown_request(request)
                return
            try:
                super().process_request(request, client_address)
            except BaseException:  # no thread started: give the slot back
                self.slots.give_back(request)
                raise

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.slots.give_back(request)

        def request_read(self, request: Any) -> None:
            self.slots.read(request)

        def handle_error(self, request: Any, client_address: Any) -> None:
            log.debug("metrics client %s: request failed", client_address, exc_info=True)

    return Server


def serve_metrics(registry: CollectorRegistry, port: int, addr: str) -> tuple[ThreadingWSGIServer, threading.Thread]:
    """Serve registry on addr:port from a daemon thread; raises OSError when it cannot bind."""
    return serve_app(make_wsgi_app(registry), port, addr)


def serve_app(app: Any, port: int, addr: str, name: str = "metrics-http") -> tuple[ThreadingWSGIServer, threading.Thread]:
    """Any WSGI app on the same quiet, bounded server (prover/cuzk's /status too)."""
    httpd = make_server(addr, port, app, _server_class(addr, port), handler_class=_QuietHandler)
    t = threading.Thread(target=httpd.serve_forever, name=name, daemon=True)
    t.start()
    return httpd, t
