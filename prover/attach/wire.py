"""The attach wire format: versioned JSON lines, one message per line, both ways.

Client -> server: ClientHello first, then Control / Submit / Bye.
Server -> client: Welcome (or Refused, then close), then the run's events so far as plain
event lines (the same JSON as a recording's lines, prover/events/), then Live (the end of
the history), then live event lines, with Reply lines interleaved in order and Bye last.
Wire messages are told from events by `kind` (no event kind is one of WIRE_KINDS).
Bump PROTOCOL_VERSION on any incompatible change; both ends refuse another version.
Version 2: read-only clients (ClientHello.readonly, Welcome.readonly): they get every event
and every control of theirs is refused with a Reply that says why.
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from prover import bounds
from prover import events as ev
from prover.events import SCHEMA_VERSION

PROTOCOL_VERSION = 2
MAX_LINE = bounds.MAX_LINE  # a client line longer than this is a protocol error (bytes)


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ClientMsg(_Msg):
    # what a client sends is taken at its exact type: protocol 1, not "1", 1.0 or true
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ClientHello(_ClientMsg):
    kind: Literal["hello"] = "hello"
    protocol: int
    client: str = Field(min_length=1, max_length=bounds.MAX_NAME_LEN, description="shown in ModeChange.source as attach:<client>")
    token: str | None = Field(None, max_length=bounds.MAX_TOKEN_LEN, description="required on TCP listeners, ignored on Unix sockets")
    readonly: bool = Field(False, description="watch only: the server refuses this client's controls")


class Control(_ClientMsg):
    kind: Literal["control"] = "control"
    id: int
    spec: str = Field(max_length=200, description="the controller's textual form, e.g. mem_sync=stream, pause")


class Submit(_ClientMsg):
    kind: Literal["submit"] = "submit"
    id: int
    partitions: int | None = Field(None, ge=1, le=1000)


class Bye(_ClientMsg):
    kind: Literal["bye"] = "bye"
    reason: str = Field("", max_length=bounds.MAX_TEXT_LEN)


class Welcome(_Msg):
    kind: Literal["welcome"] = "welcome"
    protocol: int = PROTOCOL_VERSION
    schema_version: int = SCHEMA_VERSION
    client: str = Field(description="the name this client's controls are recorded under (attach:<client>)")
    history: int = Field(description="event lines that follow before Live")
    history_dropped: int = Field(0, description="events of the run left out of the history (its bound)")
    header: dict[str, Any] = Field(default_factory=dict, description="the run's recording header (argv, config)")
    readonly: bool = Field(False, description="this client may watch, not steer (asked for, or the read-only token)")


class Refused(_Msg):
    kind: Literal["refused"] = "refused"
    protocol: int = PROTOCOL_VERSION
    reason: str


class Live(_Msg):
    kind: Literal["live"] = "live"
    events: int = Field(description="history events sent")


class Reply(_Msg):
    kind: Literal["reply"] = "reply"
    id: int
    ok: bool
    changed: bool = False
    result: Any = None
    error: str | None = None


ClientMsg = Annotated[Union[ClientHello, Control, Submit, Bye], Field(discriminator="kind")]
ServerMsg = Annotated[Union[Welcome, Refused, Live, Reply, Bye], Field(discriminator="kind")]
CLIENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(ClientMsg)
SERVER_ADAPTER: TypeAdapter[Any] = TypeAdapter(ServerMsg)
WIRE_KINDS = frozenset({"hello", "control", "submit", "bye", "welcome", "refused", "live", "reply"})


class WireError(ValueError):
    """A line that is neither a wire message nor an event; the message says which line."""


def dump(msg: BaseModel) -> bytes:
    return msg.model_dump_json().encode() + b"\n"


def parse_client(line: bytes) -> Any:
    try:
        return CLIENT_ADAPTER.validate_json(line)
    except ValidationError as exc:
        raise WireError(f"bad client message: {exc.errors()[0].get('msg')}") from None


def parse_server(line: bytes) -> Any:
    """A server line: a wire message (Welcome, Live, Reply, ...) or an event."""
    try:
        kind = json.loads(line).get("kind")
    except (ValueError, AttributeError):
        raise WireError(f"not a JSON object: {line[:80]!r}") from None
    try:
        if kind in WIRE_KINDS:
            return SERVER_ADAPTER.validate_json(line, strict=True)
        e = ev.parse_event(line)  # strict, then every field within its bound, as a recording's
    except ValidationError as exc:
        raise WireError(f"bad {kind!r} line: {exc.errors()[0].get('msg')}") from None
    bad = bounds.event_problem(e) or bounds.duplicate_key(line, e)
    if bad is not None:
        raise WireError(f"bad {kind!r} line: {bad}")
    return e
