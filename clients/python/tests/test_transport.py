"""What the Client does on the wire that ditserve-host cannot show yet: TLS
trusting only the given CA, `authorization: Bearer` on every call, and
cancelling a stream whose on_progress raised.

The host serves neither TLS nor tokens yet, so an in-process gRPC server
over real TLS stands in for it here and records what each call carried
(tests/e2e/python_client_e2e_test.cc runs the client against the real host).
"""

import concurrent.futures
import os
import subprocess
import tempfile
import threading
import unittest

import grpc

from ditserve import Client, DitserveError
from ditserve.stubs import generation_pb2, generation_pb2_grpc, health_pb2


class _RecordingGeneration(generation_pb2_grpc.GenerationServicer):
    """Answers every method and records (method, authorization metadata)."""

    # A GenerateStream request with this id gets one progress message and
    # then waits for the client to cancel.
    WAIT_FOR_CANCEL = "wait-for-cancel"

    def __init__(self):
        self.calls = []
        self.cancelled = threading.Event()

    def _record(self, method, context):
        metadata = dict(context.invocation_metadata())
        self.calls.append((method, metadata.get("authorization")))

    def Generate(self, request, context):
        self._record("Generate", context)
        return generation_pb2.GenerateResponse(
            images=[generation_pb2.Image(data=b"image")]
        )

    def GenerateStream(self, request, context):
        self._record("GenerateStream", context)
        if request.request_id == self.WAIT_FOR_CANCEL:
            context.add_callback(self.cancelled.set)
            yield generation_pb2.GenerateStreamResponse(
                progress=generation_pb2.GenerateStreamResponse.Progress(
                    step=1, total_steps=2))
            self.cancelled.wait(timeout=30)
            return
        yield generation_pb2.GenerateStreamResponse(
            result=generation_pb2.GenerateResponse(
                images=[generation_pb2.Image(data=b"streamed")]
            )
        )

    def GetServerInfo(self, request, context):
        self._record("GetServerInfo", context)
        return generation_pb2.ServerInfo(model="stand-in")

    def Check(self, request, context):
        self._record("Check", context)
        return health_pb2.HealthCheckResponse(
            status=health_pb2.HealthCheckResponse.SERVING
        )


def _self_signed_certificate(directory):
    """(key PEM, certificate PEM) for localhost, made by openssl."""
    key = os.path.join(directory, "key.pem")
    cert = os.path.join(directory, "cert.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
         "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )
    with open(key, "rb") as key_file, open(cert, "rb") as cert_file:
        return key_file.read(), cert_file.read()


class TransportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        key, cls.cert = _self_signed_certificate(cls.dir.name)
        cls.ca_path = os.path.join(cls.dir.name, "cert.pem")
        cls.servicer = _RecordingGeneration()
        cls.server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(max_workers=2)
        )
        generation_pb2_grpc.add_GenerationServicer_to_server(
            cls.servicer, cls.server
        )
        cls.server.add_generic_rpc_handlers([
            grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
                "Check": grpc.unary_unary_rpc_method_handler(
                    cls.servicer.Check,
                    request_deserializer=(
                        health_pb2.HealthCheckRequest.FromString),
                    response_serializer=(
                        health_pb2.HealthCheckResponse.SerializeToString),
                ),
            })
        ])
        credentials = grpc.ssl_server_credentials([(key, cls.cert)])
        port = cls.server.add_secure_port("localhost:0", credentials)
        cls.server.start()
        cls.address = f"localhost:{port}"

    @classmethod
    def tearDownClass(cls):
        cls.server.stop(grace=None)
        cls.dir.cleanup()

    def setUp(self):
        self.servicer.calls.clear()
        self.servicer.cancelled.clear()

    def test_every_call_carries_the_token(self):
        with Client(self.address, tls_ca=self.ca_path, token="s3cret",
                    timeout=30) as client:
            self.assertEqual(client.generate("a fox"), [b"image"])
            self.assertEqual(client.stream("a fox"), [b"streamed"])
            self.assertEqual(client.info().model, "stand-in")
            self.assertEqual(client.health(), "SERVING")
        self.assertEqual(
            self.servicer.calls,
            [("Generate", "Bearer s3cret"), ("GenerateStream", "Bearer s3cret"),
             ("GetServerInfo", "Bearer s3cret"), ("Check", "Bearer s3cret")],
        )

    def test_without_a_token_no_authorization_is_sent(self):
        with Client(self.address, tls_ca=self.cert, timeout=30) as client:
            client.info()
        self.assertEqual(self.servicer.calls, [("GetServerInfo", None)])

    def test_plaintext_client_cannot_talk_to_a_tls_server(self):
        with Client(self.address, timeout=30) as client:
            with self.assertRaises(DitserveError) as raised:
                client.info()
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(self.servicer.calls, [])

    def test_untrusted_server_certificate_is_refused(self):
        other_dir = tempfile.mkdtemp(dir=self.dir.name)
        _, other_ca = _self_signed_certificate(other_dir)
        with Client(self.address, tls_ca=other_ca, timeout=30) as client:
            with self.assertRaises(DitserveError) as raised:
                client.info()
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(self.servicer.calls, [])

    def test_stream_is_cancelled_when_on_progress_raises(self):
        def stop(progress):
            raise KeyboardInterrupt(f"stopped at step {progress.step}")

        with Client(self.address, tls_ca=self.cert, timeout=30) as client:
            try:
                client.stream("a fox", on_progress=stop,
                              request_id=_RecordingGeneration.WAIT_FOR_CANCEL)
            except KeyboardInterrupt as error:
                # Keeping the traceback keeps the call object alive, so only
                # an explicit cancel (not its garbage collection) ends it.
                raised = error
            self.assertEqual(str(raised), "stopped at step 1")
            # Before close(), which would cancel every call of the channel.
            self.assertTrue(self.servicer.cancelled.wait(timeout=10))


if __name__ == "__main__":
    unittest.main()
