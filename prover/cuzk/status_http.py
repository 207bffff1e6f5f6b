"""`GET /status`: cuzk's status JSON (status_json.py) over HTTP, as cuzk's `status_listen`
serves it, on the metrics endpoint's quiet, bounded server (prover/observe/metrics_http.py):
loopback by default, a read timeout, a cap on connections, no access log on the terminal.
Anything but GET /status is 404, as cuzk answers."""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable


def status_app(snapshot: Callable[[], dict]) -> Callable[..., Iterable[bytes]]:
    def app(environ: dict, start_response: Any) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "GET" or environ.get("PATH_INFO") != "/status":
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"404 Not Found\n"]
        try:
            body = json.dumps(snapshot(), separators=(",", ":")).encode()
        except Exception as exc:  # say it as cuzk does, never a traceback
            body = json.dumps({"error": f"{type(exc).__name__}: {exc}"[:300]}).encode()
            start_response("500 Internal Server Error", [("Content-Type", "application/json")])
            return [body]
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                  ("Access-Control-Allow-Origin", "*")])
        return [body]
    return app


class StatusHttp:
    def __init__(self, snapshot: Callable[[], dict]) -> None:
        self._app = status_app(snapshot)
        self._httpd: Any = None

    def start(self, port: int, addr: str = "127.0.0.1") -> int:
        from prover.observe.metrics_http import serve_app

        try:
            self._httpd, _ = serve_app(self._app, port, addr, name="cuzk-status-http")
        except OSError as exc:
            raise OSError(f"cannot serve /status on {addr}:{port}: {exc.strerror or exc}") from None
        return int(self._httpd.server_address[1])

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
