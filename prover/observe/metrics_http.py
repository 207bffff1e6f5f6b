"""The /metrics HTTP server: prometheus-client's WSGI app on a threading server that keeps quiet.

prometheus-client's own `start_http_server` lets socketserver print a traceback to stderr when
a client goes away mid-answer (a scanner that sends a 70 kB URI and hangs up gets its 414
written into a closed socket). Under `record` that traceback lands in the operator's terminal
and log among the run's own lines (the dashboard's Textual swallows stderr), so any client
could write tracebacks there at will; here a handler's failure is logged at debug level
instead, and the server keeps serving. It is bounded too: a client has READ_TIMEOUT_S to
send its request, and at most MAX_CONNECTIONS are served at once (more are closed at accept), so
idle or slow clients cannot grow the process's threads without bound.
"""
from __future__ import annotations

import logging
import socket
import threading
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

log = logging.getLogger(__name__)
READ_TIMEOUT_S = 5.0  # a scrape's request is one short line and a few headers
MAX_CONNECTIONS = 32  # Prometheus scrapes one at a time; this leaves room for curl and a second scraper


class _QuietHandler(WSGIRequestHandler):
    timeout = READ_TIMEOUT_S  # socketserver sets it on the connection: a silent client is dropped

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """No access log on stderr (the dashboard owns the terminal)."""


def _server_class(addr: str, port: int) -> type[ThreadingWSGIServer]:
    """A server class bound to addr's family (an IPv6 literal or name needs AF_INET6)."""
    family = socket.getaddrinfo(addr or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]

    class Server(ThreadingWSGIServer):
        address_family = family
        slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

        def process_request(self, request: Any, client_address: Any) -> None:
            if not self.slots.acquire(blocking=False):
                log.debug("metrics client %s: refused, %d connections open", client_address, MAX_CONNECTIONS)
                self.shutdown_request(request)
                return
            try:
                super().process_request(request, client_address)
            except BaseException:  # no thread started: give the slot back
                self.slots.release()
                raise

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.slots.release()

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
