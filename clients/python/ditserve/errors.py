"""The exception a failed call raises."""

import functools
import os

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import ditserve

_DETAILS_KEY = "grpc-status-details-bin"


@functools.lru_cache(maxsize=None)
def _rpc_status_classes():
    """google.rpc.Status and google.rpc.BadRequest, from the descriptor set
    generate_stubs.sh writes next to the stubs, in a pool of their own."""
    for folder in ditserve.__path__:
        path = os.path.join(folder, "rpc_status.desc")
        if os.path.exists(path):
            break
    else:
        raise FileNotFoundError("rpc_status.desc is not on the ditserve "
                                "package path; run generate_stubs.sh")
    with open(path, "rb") as f:
        files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    factory = message_factory.MessageFactory(pool)
    return tuple(
        factory.GetPrototype(pool.FindMessageTypeByName(name))
        for name in ("google.rpc.Status", "google.rpc.BadRequest"))


def bad_request_fields(trailing_metadata) -> list:
    """The request fields named by the google.rpc.BadRequest in a call's
    grpc-status-details-bin trailer; empty when there is none."""
    details = dict(trailing_metadata or ()).get(_DETAILS_KEY)
    if not details:
        return []
    status_class, bad_request_class = _rpc_status_classes()
    fields = []
    for detail in status_class.FromString(details).details:
        if detail.type_url.endswith("/google.rpc.BadRequest"):
            bad_request = bad_request_class.FromString(detail.value)
            fields.extend(v.field for v in bad_request.field_violations)
    return fields


class DitserveError(Exception):
    """A call the server (or the channel) failed, with its gRPC status.

    Attributes:
      code: the grpc.StatusCode, e.g. grpc.StatusCode.INVALID_ARGUMENT.
      message: the server's message (for a bad request it names the field).
      fields: the GenerateRequest fields a refusal is about, e.g. ["height"],
        from the status's google.rpc.BadRequest; empty for other errors.
    """

    def __init__(self, code: grpc.StatusCode, message: str, fields=()):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.fields = list(fields)

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "DitserveError":
        trailing = getattr(error, "trailing_metadata", None)
        return cls(error.code(), error.details() or "",
                   bad_request_fields(trailing() if trailing else None))
