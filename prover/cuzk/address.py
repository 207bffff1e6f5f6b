"""Where the cuzk wire listens: gRPC's own target forms, as cuzk and Curio write them.

    unix:///run/c2tui/cuzk.sock   a Unix socket (cuzk's default form), created 0600
    unix:cuzk.sock                a relative one
    127.0.0.1:9820                TCP, loopback only (127.0.0.0/8, ::1, localhost)
    [::1]:9820                    (port 0: any free port, said once bound)
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from prover.attach.address import AttachError


class AddressError(AttachError):
    """A --grpc address this server will not listen on; the message says why in one line."""


@dataclass(frozen=True)
class GrpcAddress:
    path: str | None = None
    host: str | None = None
    port: int | None = None

    @property
    def tcp(self) -> bool:
        return self.path is None

    def target(self, port: int | None = None) -> str:
        """What grpc binds / dials."""
        if self.path is not None:
            return f"unix:{self.path}"
        host = f"[{self.host}]" if self.host and ":" in self.host else self.host
        return f"{host}:{self.port if port is None else port}"

    def __str__(self) -> str:
        return f"unix://{self.path}" if self.path is not None and self.path.startswith("/") else self.target()


def parse_grpc_address(text: str) -> GrpcAddress:
    t = text.strip()
    if not t:
        raise AddressError("empty --grpc address: give unix:///PATH or 127.0.0.1:PORT")
    if t.startswith("unix:"):
        path = t[len("unix://"):] if t.startswith("unix://") else t[len("unix:"):]
        if not path or "\x00" in path:
            raise AddressError(f"{text!r} names no socket path: give unix:///PATH")
        return GrpcAddress(path=path)
    if "://" in t:
        raise AddressError(f"{text!r}: give unix:///PATH or HOST:PORT (loopback)")
    host, sep, port_s = t.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port_s.isdigit() or not 0 <= int(port_s) < 65536:
        raise AddressError(f"{text!r}: give a port, e.g. 127.0.0.1:9820")
    if host != "localhost":
        try:
            loop = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loop = False
        if not loop:
            raise AddressError(f"{text!r}: TCP listens on loopback only (127.0.0.1, ::1 or localhost); "
                               "for another machine use a Unix socket behind an SSH tunnel")
    return GrpcAddress(host=host, port=int(port_s))
