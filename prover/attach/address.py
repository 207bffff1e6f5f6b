"""Where an attach server listens: a Unix socket path (the default, owner-only) or
`tcp://HOST:PORT` on loopback only, guarded by a shared token (for containers)."""
from __future__ import annotations

import ipaddress
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from prover import bounds
from prover.inputs import InputError, read_input

TOKEN_ENV = "C2TUI_ATTACH_TOKEN"


class AttachError(RuntimeError):
    """Attach could not start or connect; the message says why in one line."""


@dataclass(frozen=True)
class Address:
    path: str | None = None  # Unix socket
    host: str | None = None  # TCP (loopback)
    port: int | None = None

    @property
    def tcp(self) -> bool:
        return self.path is None

    def __str__(self) -> str:
        return self.path if self.path is not None else f"tcp://{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """'PATH' or 'unix:PATH' -> Unix socket; 'tcp://127.0.0.1:PORT' -> loopback TCP."""
    if not text:
        raise AttachError("empty --listen/attach address")
    if text.startswith("unix:"):
        if not text[5:]:
            raise AttachError("'unix:' names no socket path: give unix:PATH")
        return Address(path=text[5:])
    if "://" not in text:
        return Address(path=text)
    scheme, rest = text.split("://", 1)
    if scheme != "tcp":
        raise AttachError(f"{text!r}: use a socket path or tcp://127.0.0.1:PORT")
    host, sep, port_s = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not port_s.isdigit() or not 0 < int(port_s) < 65536:
        raise AttachError(f"{text!r}: give a port, e.g. tcp://127.0.0.1:7700")
    if host != "localhost":
        try:
            loop = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loop = False
        if not loop:
            raise AttachError(f"{text!r}: TCP listens on loopback only (127.0.0.1, ::1 or localhost)")
    return Address(host=host, port=int(port_s))


def read_token(token_file: str | Path | None, env: bool = True) -> str | None:
    """The shared token: $C2TUI_ATTACH_TOKEN (unless env=False), else the first line of token_file
    (a regular file of at most MAX_TOKEN_BYTES: /dev/zero or a FIFO is refused, not read)."""
    value = os.environ.get(TOKEN_ENV) if env else None
    if value:
        return check_token(value.strip(), f"${TOKEN_ENV}")
    if token_file is None:
        return None
    try:
        raw = read_input(token_file, bounds.MAX_TOKEN_BYTES, "token file")
    except InputError as exc:
        raise AttachError(str(exc)) from None
    try:
        lines = raw.decode("utf-8").strip().splitlines()
    except UnicodeDecodeError:
        raise AttachError(f"token file {token_file}: not UTF-8 text") from None
    return check_token(lines[0].strip(), f"token file {token_file}") if lines else None


def check_token(tok: str, where: str) -> str:
    """A token long enough not to be guessed, short enough to be a token (prover/bounds.py)."""
    if not bounds.MIN_TOKEN_LEN <= len(tok) <= bounds.MAX_TOKEN_LEN:
        raise AttachError(f"{where}: a token of {len(tok)} characters; it must have "
                          f"{bounds.MIN_TOKEN_LEN}..{bounds.MAX_TOKEN_LEN} (delete the file to have one made)")
    if not tok.isprintable() or any(c.isspace() for c in tok):
        raise AttachError(f"{where}: a token is one word of printable characters")
    return tok


def server_token(token_file: str | Path | None, env: bool = True) -> str:
    """The server's token: as read_token, else a new random one written to token_file (0600).
    env=False (the read-only token): the file only, never $C2TUI_ATTACH_TOKEN."""
    tok = (read_token(token_file, env) if token_file is None or Path(token_file).exists()
           else read_token(None, env))
    if tok:
        return tok
    if token_file is None:
        raise AttachError(f"a TCP listener needs a token: set ${TOKEN_ENV} or give --token-file FILE")
    tok = secrets.token_urlsafe(24)
    try:
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(tok + "\n")
    except OSError as exc:
        raise AttachError(f"cannot write token file {token_file}: {exc.strerror or exc}") from None
    return tok
