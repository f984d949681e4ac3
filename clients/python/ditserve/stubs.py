"""The generated protobuf and gRPC modules, with a clear error when missing."""

try:
    from ditserve.grpc_health.v1 import health_pb2
    from ditserve.v1 import generation_pb2
    from ditserve.v1 import generation_pb2_grpc
except ModuleNotFoundError as error:
    if not (error.name or "").startswith("ditserve."):
        raise
    raise ImportError(
        f"{error.name} is not generated: run "
        "`clients/python/generate_stubs.sh DIR` (the CMake build writes "
        "build/python) and put DIR on PYTHONPATH after clients/python"
    ) from error

__all__ = ["generation_pb2", "generation_pb2_grpc", "health_pb2"]
