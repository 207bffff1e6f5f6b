"""The service's methods bound from the schema's descriptor: no generated *_grpc module.

`METHODS` maps each rpc to its request and response classes (read from proving_pb2's
service descriptor, so a method added to the .proto is served or refused by name, never
guessed); `generic_handler(impl)` gives grpc a server handler over an object with one method
per rpc (snake_case); `Stub(channel)` calls them as a client.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

import grpc
from google.protobuf import message_factory

from prover.cuzk import proving_pb2 as pb

SERVICE = "cuzk.v1.ProvingEngine"


@dataclass(frozen=True)
class Method:
    name: str  # SubmitProof
    attr: str  # submit_proof
    request: Any  # a generated message class (protobuf's metaclass: FromString, SerializeToString)
    response: Any

    @property
    def path(self) -> str:
        return f"/{SERVICE}/{self.name}"


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower().replace("s_r_s", "srs")


def _methods() -> dict[str, Method]:
    svc = pb.DESCRIPTOR.services_by_name["ProvingEngine"]
    cls = message_factory.GetMessageClass
    return {m.name: Method(m.name, _snake(m.name), cls(m.input_type), cls(m.output_type)) for m in svc.methods}


METHODS: dict[str, Method] = _methods()


def generic_handler(impl: Any) -> grpc.GenericRpcHandler:
    """Every method of the service, answered by impl.<attr>(request, context)."""
    handlers = {m.name: grpc.unary_unary_rpc_method_handler(getattr(impl, m.attr),
                                                            request_deserializer=m.request.FromString,
                                                            response_serializer=m.response.SerializeToString)
                for m in METHODS.values()}
    return grpc.method_handlers_generic_handler(SERVICE, handlers)


class Stub:
    """stub.GetStatus(pb.GetStatusRequest(), timeout=5) and so on, over a channel."""

    def __getattr__(self, name: str) -> Callable[..., Any]:  # the methods bound in __init__, for the checker
        raise AttributeError(name)

    def __init__(self, channel: grpc.Channel) -> None:
        for m in METHODS.values():
            call: Callable[..., Any] = channel.unary_unary(m.path, request_serializer=m.request.SerializeToString,
                                                           response_deserializer=m.response.FromString)
            setattr(self, m.name, call)
