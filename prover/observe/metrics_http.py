"""The /metrics HTTP server: prometheus-client's WSGI app on a threading server that keeps quiet.

prometheus-client's own `start_http_server` lets socketserver print a traceback to stderr when
a client goes away mid-answer (a scanner that sends a 70 kB URI and hangs up gets its 414
written into a closed socket). Under the dashboard that traceback lands on the operator's
screen, so a client could scribble on it at will; here a handler's failure is logged at debug
level instead, and the server keeps serving.
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


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """No access log on stderr (the dashboard owns the terminal)."""


def _server_class(addr: str, port: int) -> type[ThreadingWSGIServer]:
    """A server class bound to addr's family (an IPv6 literal or name needs AF_INET6)."""
    family = socket.getaddrinfo(addr or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]

    class Server(ThreadingWSGIServer):
        address_family = family

        def handle_error(self, request: Any, client_address: Any) -> None:
            log.debug("metrics client %s: request failed", client_address, exc_info=True)

    return Server


def serve_metrics(registry: CollectorRegistry, port: int, addr: str) -> tuple[ThreadingWSGIServer, threading.Thread]:
    """Serve registry on addr:port from a daemon thread; raises OSError when it cannot bind."""
    httpd = make_server(addr, port, make_wsgi_app(registry), _server_class(addr, port), handler_class=_QuietHandler)
    t = threading.Thread(target=httpd.serve_forever, name="metrics-http", daemon=True)
    t.start()
    return httpd, t
