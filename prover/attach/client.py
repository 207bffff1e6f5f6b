"""The client end of attach: connect, hello, then a reader thread hands every event to a
callback while controls wait for their Reply.

    client = AttachClient("run.sock", name="ops")
    welcome = client.connect()                 # raises AttachRefused / AttachError
    client.start(on_event, on_end)             # events (history, then live) on a thread
    RemoteController(client).set_mem_sync("stream")   # -> ModeChange(source="attach:ops")
"""
from __future__ import annotations

import getpass
import itertools
import os
import socket
import threading
from typing import Any, Callable

from pydantic import ValidationError

from prover import bounds
from prover.attach import wire
from prover.attach.address import Address, AttachError, parse_address, read_token
from prover.pipeline.control.knob_facade import KnobFacade

REPLY_TIMEOUT_S = 10.0


class AttachRefused(AttachError):
    """The server said no (other protocol version, bad token, too many clients)."""


def default_name() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        user = "client"
    return f"{user}-{os.getpid()}"


class AttachClient:
    def __init__(self, address: str | Address, name: str | None = None, token: str | None = None,
                 token_file: str | None = None, protocol: int = wire.PROTOCOL_VERSION, readonly: bool = False) -> None:
        self.address = parse_address(address) if isinstance(address, str) else address
        self.want_name = name if name is not None else default_name()
        if not 1 <= len(self.want_name) <= bounds.MAX_NAME_LEN or not self.want_name.isprintable():
            raise AttachError(f"--name: {len(self.want_name)} characters; a client name is 1..{bounds.MAX_NAME_LEN} "
                              "printable characters")
        self.token = token or read_token(token_file)
        self.protocol = protocol
        self.readonly = readonly
        self.welcome: wire.Welcome | None = None
        self.live = False  # the history has been received
        self.end_reason: str | None = None
        self._sock: socket.socket | None = None
        self._reader: Any = None
        self._ids = itertools.count(1)
        self._replies: dict[int, tuple[threading.Event, list]] = {}
        self._wlock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        return self.welcome.client if self.welcome else self.want_name

    def connect(self, timeout: float = 5.0) -> wire.Welcome:
        a = self.address
        try:
            if a.tcp:
                s = socket.create_connection((a.host, a.port), timeout=timeout)
            else:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(timeout)
                s.connect(a.path)
        except OSError as exc:
            raise AttachError(f"cannot attach to {a}: {exc.strerror or exc} (is a `c2tui record --listen` running?)") from None
        self._sock = s
        self._reader = s.makefile("rb")
        self._send(wire.ClientHello(protocol=self.protocol, client=self.want_name, token=self.token,
                                    readonly=self.readonly))
        try:
            msg = wire.parse_server(self._reader.readline(wire.MAX_LINE) or b"{}")
        except (OSError, wire.WireError) as exc:
            self.close()
            raise AttachError(f"{a}: no valid welcome ({exc})") from None
        if isinstance(msg, wire.Refused):
            self.close()
            raise AttachRefused(f"{a} refused the attach: {msg.reason}")
        if not isinstance(msg, wire.Welcome) or msg.protocol != wire.PROTOCOL_VERSION:
            self.close()
            got = getattr(msg, "protocol", None)
            raise AttachRefused(f"{a} speaks attach protocol {got}, this c2tui speaks {wire.PROTOCOL_VERSION}")
        s.settimeout(None)
        self.welcome = msg
        return msg

    def start(self, on_event: Callable[[Any], None], on_end: Callable[[str], None] | None = None) -> None:
        """Read on a thread: events go to on_event; on_end(reason) once the stream stops."""
        def run() -> None:
            reason = "connection closed"
            try:
                for raw in self._reader:
                    msg = wire.parse_server(raw)
                    if isinstance(msg, wire.Reply):
                        self._answer(msg)
                    elif isinstance(msg, wire.Live):
                        self.live = True
                    elif isinstance(msg, wire.Bye):
                        reason = msg.reason or "server said bye"
                        break
                    elif not isinstance(msg, (wire.Welcome, wire.Refused)):
                        on_event(msg)
            except (OSError, ValueError) as exc:  # ValueError: a closed file or a bad line
                reason = f"connection lost: {exc}"
            self.end_reason = reason
            for ev_, box in list(self._replies.values()):
                box.append(wire.Reply(id=-1, ok=False, error=f"detached: {reason}"))
                ev_.set()
            if on_end is not None:
                on_end(reason)

        self._thread = threading.Thread(target=run, name="attach-reader", daemon=True)
        self._thread.start()

    # --- controls -------------------------------------------------------------------------------
    def _send(self, msg: Any) -> None:
        if self._sock is None:
            raise AttachError("not connected")
        with self._wlock:
            self._sock.sendall(wire.dump(msg))

    def _answer(self, reply: wire.Reply) -> None:
        slot = self._replies.pop(reply.id, None)
        if slot is not None:
            slot[1].append(reply)
            slot[0].set()

    def request(self, msg_cls: type, timeout: float = REPLY_TIMEOUT_S, **fields: Any) -> wire.Reply:
        """Send a Control/Submit and wait for its Reply (needs start() to be reading)."""
        rid = next(self._ids)
        try:
            msg = msg_cls(id=rid, **fields)
        except ValidationError as exc:  # e.g. a 201-character spec: one line, not pydantic's report
            e = exc.errors()[0]
            raise ValueError(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}") from None
        slot: tuple[threading.Event, list] = (threading.Event(), [])
        self._replies[rid] = slot
        try:
            self._send(msg)
        except OSError as exc:
            self._replies.pop(rid, None)
            raise AttachError(f"detached: {exc.strerror or exc}") from None
        if not slot[0].wait(timeout):
            self._replies.pop(rid, None)
            raise AttachError(f"no reply from the prover within {timeout:g}s")
        return slot[1][0]

    def close(self) -> None:
        """Detach (the prover goes on)."""
        s, self._sock = self._sock, None
        if s is None:
            return
        try:
            with self._wlock:
                s.sendall(wire.dump(wire.Bye(reason="detached")))
        except OSError:
            pass
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


class RemoteController(KnobFacade):
    """The Controller's face over attach: each call is one Control line and waits for the
    prover's Reply; a refusal raises ValueError with the prover's words. `source` is ignored:
    the server records every change as attach:<client>."""

    def __init__(self, client: AttachClient) -> None:
        self.client = client

    def apply(self, spec: str, source: str | None = None) -> bool:
        r = self.client.request(wire.Control, spec=spec)
        if not r.ok:
            raise ValueError(r.error or "refused")
        return r.changed

    def set(self, knob: str, value: Any, source: str | None = None, **where: Any) -> bool:
        """As Controller.set: one knob to one value (checked by the prover)."""
        text = ("on" if value else "off") if isinstance(value, bool) else value
        return self.apply(f"{knob}={text}")

    def submit_sector(self, partitions: int | None = None, source: str | None = None, cls: str | None = None) -> int:
        if cls is not None:  # a proof class: the controller's textual form (submit=winning)
            return self.apply(f"submit={cls}")
        r = self.client.request(wire.Submit, partitions=partitions)
        if not r.ok:
            raise ValueError(r.error or "refused")
        return int(r.result)
