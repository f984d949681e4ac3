"""Client of one ditserve host: Generate, GenerateStream, GetServerInfo and
grpc.health.v1 Check."""

import contextlib
import os
from typing import Callable, Iterable, Optional, Union

import grpc

from ditserve.chunks import ChunkAssembler, PartialImageAssembler
from ditserve.errors import DitserveError
from ditserve.request import build_request
from ditserve.stubs import generation_pb2, generation_pb2_grpc, health_pb2

# As ditctl: a video or a large batch of PNGs is far over gRPC's 4 MB default.
_MAX_MESSAGE_BYTES = 256 << 20
# The most often a ditserve host is promised to accept a client's pings
# while it sends nothing (README, "Clients that vanish"); faster pings may
# make it close the connection. The longest keeps the milliseconds within
# gRPC's int.
_SHORTEST_KEEPALIVE_SECONDS = 10
_LONGEST_KEEPALIVE_SECONDS = 2_000_000
# Above the 5 minutes a gRPC server or proxy left at its defaults allows
# between pings while nothing is sent, so that one in front of the host does
# not close the connection for pinging too often.
_DEFAULT_KEEPALIVE_SECONDS = 360
_SHORTEST_KEEPALIVE_TIMEOUT_SECONDS = 0.001
# As ditctl's --timeout: gRPC turns a timeout of 0, a negative one or NaN
# into a deadline already passed, and inf into one past its clock.
_LONGEST_TIMEOUT_SECONDS = 1_000_000

Prompts = Union[str, Iterable[str]]
Progress = generation_pb2.GenerateStreamResponse.Progress
PartialImage = generation_pb2.GenerateStreamResponse.PartialImage


def _keepalive_options(keepalive, keepalive_timeout):
    """Channel options that ping the host every `keepalive` seconds while a
    call waits; none for None."""
    if keepalive is None:
        return []
    if not (_SHORTEST_KEEPALIVE_SECONDS <= keepalive
            <= _LONGEST_KEEPALIVE_SECONDS):
        raise ValueError(
            f"keepalive {keepalive}: allowed {_SHORTEST_KEEPALIVE_SECONDS} "
            f"to {_LONGEST_KEEPALIVE_SECONDS} seconds (the most often a "
            "ditserve host is promised to accept pings), or None"
        )
    if not (_SHORTEST_KEEPALIVE_TIMEOUT_SECONDS <= keepalive_timeout
            <= _LONGEST_KEEPALIVE_SECONDS):
        raise ValueError(
            f"keepalive_timeout {keepalive_timeout}: allowed "
            f"{_SHORTEST_KEEPALIVE_TIMEOUT_SECONDS} to "
            f"{_LONGEST_KEEPALIVE_SECONDS} seconds"
        )
    keepalive_ms = int(keepalive * 1000)
    # A Generate call sends nothing while its run lasts, and gRPC 1.51 would
    # stop pinging after two pings without sending data.
    return [
        ("grpc.keepalive_time_ms", keepalive_ms),
        ("grpc.keepalive_timeout_ms", int(keepalive_timeout * 1000)),
        ("grpc.http2.max_pings_without_data", 0),
    ]


class Client:
    """A channel to a ditserve host.

    Args:
      address: "host:port" of ditserve-host.
      tls_ca: None for a plaintext channel; else TLS trusting this CA
        certificate (PEM), given as a file path or as the PEM bytes.
      tls_cert, tls_key: a client certificate and its key (PEM, paths or
        bytes) for servers that require one (ditserve-host --tls_client_ca).
      token: sent as `authorization: Bearer <token>` with every call.
      timeout: seconds before each call is abandoned (DEADLINE_EXCEEDED);
        None waits as long as the call takes.
      keepalive: seconds without anything from the host, while a call is
        in flight, before the client pings it (at least 10, which ditserve
        hosts accept; servers and proxies left at gRPC's defaults close a
        connection pinged more often than every 300); a ping not
        answered within keepalive_timeout seconds fails the call with
        UNAVAILABLE, so that a host that died or a network that went dark
        ends a call without a timeout too. None sends no pings.

    Every method raises DitserveError (gRPC status code and the server's
    message) when the call fails. Use it as a context manager, or call
    close(), to close the channel.
    """

    def __init__(
        self,
        address: str,
        tls_ca: Union[None, str, os.PathLike, bytes] = None,
        token: Optional[str] = None,
        timeout: Optional[float] = None,
        tls_cert: Union[None, str, os.PathLike, bytes] = None,
        tls_key: Union[None, str, os.PathLike, bytes] = None,
        keepalive: Optional[float] = _DEFAULT_KEEPALIVE_SECONDS,
        keepalive_timeout: float = 20,
    ):
        if timeout is not None and not (0 < timeout
                                        <= _LONGEST_TIMEOUT_SECONDS):
            raise ValueError(
                f"timeout {timeout}: allowed above 0 and at most "
                f"{_LONGEST_TIMEOUT_SECONDS} seconds, or None to wait as "
                "long as the call takes"
            )
        options = [("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES)]
        options += _keepalive_options(keepalive, keepalive_timeout)
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        if tls_ca is None:
            if tls_cert is not None:
                raise ValueError("tls_cert needs tls_ca: mutual TLS is TLS")
            self._channel = grpc.insecure_channel(address, options)
        else:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_pem(tls_ca),
                private_key=_pem(tls_key),
                certificate_chain=_pem(tls_cert),
            )
            self._channel = grpc.secure_channel(address, credentials, options)
        self._metadata = ()
        if token:
            self._metadata = (("authorization", f"Bearer {token}"),)
        self._timeout = timeout
        self._generation = generation_pb2_grpc.GenerationStub(self._channel)
        # A generated health stub would import grpc.health.v1.health_pb2,
        # inside grpcio's own package; Check alone is this one line.
        self._health_check = self._channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )

    def generate(self, prompts: Prompts, **fields) -> list:
        """Generates one output per prompt with Generate; returns their
        encoded bytes in prompt order (PNG of a video: one per frame).

        `fields` are GenerateRequest fields (height, width,
        num_inference_steps, guidance_scale, seed, negative_prompt,
        max_sequence_length, output_format, num_frames, fps, ...); an
        unknown one raises ValueError naming it before anything is sent.
        """
        request = _request_to_run(prompts, fields)
        with _rpc_errors():
            response = self._generation.Generate(
                request, timeout=self._timeout, metadata=self._metadata
            )
        return [image.data for image in response.images]

    def validate(self, prompts: Prompts, **fields):
        """Freezes the request as stream would run it, without running it;
        returns the frozen InputConfig (every default filled in, the seed
        drawn, the request id) or raises DitserveError naming a bad field.
        Through GenerateStream, which takes every field (partial_images
        too)."""
        request = build_request(prompts, fields)
        request.validate_only = True
        with _rpc_errors():
            for message in self._generation.GenerateStream(
                request, timeout=self._timeout, metadata=self._metadata
            ):
                if message.WhichOneof("event") == "result":
                    return message.result.config
        raise ValueError("GenerateStream ended without a result")

    def stream(
        self,
        prompts: Prompts,
        on_progress: Optional[Callable[[Progress], None]] = None,
        on_partial_image: Optional[Callable[[PartialImage], None]] = None,
        **fields,
    ) -> list:
        """As generate, through GenerateStream: calls `on_progress` with each
        Progress message (step, total_steps, elapsed_seconds) as the denoising
        steps finish, and reassembles outputs sent in chunks. With the
        partial_images field, calls `on_partial_image` with each preview of
        each output once all of it came (partial_image_index, step, and
        image with its prompt_index and whole data)."""
        request = _request_to_run(prompts, fields)
        assembler = ChunkAssembler()
        previews = PartialImageAssembler()
        result = None
        responses = self._generation.GenerateStream(
            request, timeout=self._timeout, metadata=self._metadata
        )
        try:
            with _rpc_errors():
                for message in responses:
                    event = message.WhichOneof("event")
                    if event == "progress" and on_progress is not None:
                        on_progress(message.progress)
                    elif event == "partial_image":
                        whole = previews.add(message.partial_image)
                        if whole is not None and on_partial_image is not None:
                            on_partial_image(whole)
                    elif event == "image_chunk":
                        assembler.add(message.image_chunk)
                    elif event == "result":
                        result = message.result
        finally:
            # Ends the server's run too when a callback raised.
            responses.cancel()
        if result is None:
            raise ValueError("GenerateStream ended without a result")
        return assembler.outputs(result)

    def info(self) -> generation_pb2.ServerInfo:
        """The served model, parallel configuration, defaults and limits."""
        with _rpc_errors():
            return self._generation.GetServerInfo(
                generation_pb2.GetServerInfoRequest(),
                timeout=self._timeout,
                metadata=self._metadata,
            )

    def health(self, service: str = "") -> str:
        """"SERVING", "NOT_SERVING", ... of the server ("") or of `service`
        (e.g. "ditserve.v1.Generation")."""
        with _rpc_errors():
            response = self._health_check(
                health_pb2.HealthCheckRequest(service=service),
                timeout=self._timeout,
                metadata=self._metadata,
            )
        return health_pb2.HealthCheckResponse.ServingStatus.Name(
            response.status
        )

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _request_to_run(prompts: Prompts, fields: dict):
    """build_request for generate and stream, which return outputs: a
    validate_only request has none, so it goes through validate."""
    if fields.get("validate_only"):
        raise ValueError(
            "validate_only: generate and stream return outputs, which a "
            "validate_only request has none of; call validate() for the "
            "frozen config"
        )
    return build_request(prompts, fields)


def _pem(source):
    """PEM bytes from a path or bytes; None stays None."""
    if source is None or isinstance(source, bytes):
        return source
    with open(source, "rb") as file:
        return file.read()


@contextlib.contextmanager
def _rpc_errors():
    try:
        yield
    except grpc.RpcError as error:
        raise DitserveError.from_rpc_error(error) from error
