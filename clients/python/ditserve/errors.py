"""The exception a failed call raises."""

import grpc


class DitserveError(Exception):
    """A call the server (or the channel) failed, with its gRPC status.

    Attributes:
      code: the grpc.StatusCode, e.g. grpc.StatusCode.INVALID_ARGUMENT.
      message: the server's message (for a bad request it names the field).
    """

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "DitserveError":
        return cls(error.code(), error.details() or "")
