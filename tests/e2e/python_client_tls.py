#!/usr/bin/env python3
"""Runs the ditserve Python package against a host started with --tls_cert,
--tls_key, --tls_client_ca and --auth_token_file, and prints one JSON object
of what each call gave. python_client_e2e_test.cc checks the JSON.

  PYTHONPATH=... python_client_tls.py HOST:PORT CA CERT KEY TOKEN
"""

import json
import sys

from ditserve import Client, DitserveError

SMALL = {"height": 64, "width": 48, "num_inference_steps": 2, "seed": 3,
         "max_sequence_length": 32}
# 200 steps at 1024 x 1024 run for minutes: only a cancel ends them soon.
LONG = dict(SMALL, height=1024, width=1024, num_inference_steps=200)


class StopAfterFirstStep(Exception):
    pass


def outcome(call):
    try:
        result = call()
    except DitserveError as error:
        return {"code": error.code.name, "message": error.message}
    return {"code": "OK", "result": result}


def main():
    address, ca, cert, key, token = sys.argv[1:]
    summary = {}
    with Client(address, tls_ca=ca, tls_cert=cert, tls_key=key, token=token,
                timeout=120) as client:
        summary["model"] = outcome(lambda: client.info().model)
        summary["health"] = outcome(client.health)
        images = client.generate("behind tls", **SMALL)
        summary["png_signature"] = images[0][:8].hex()

        def stop(progress):
            raise StopAfterFirstStep(progress.step)

        try:
            client.stream("a long one", on_progress=stop, **LONG)
            summary["stream_stopped"] = False
        except StopAfterFirstStep:
            summary["stream_stopped"] = True

    with Client(address, tls_ca=ca, tls_cert=cert, tls_key=key,
                token="wrong-token-9876543210", timeout=60) as client:
        summary["wrong_token"] = outcome(lambda: client.info().model)
    with Client(address, tls_ca=ca, tls_cert=cert, tls_key=key,
                timeout=60) as client:
        summary["no_token"] = outcome(lambda: client.info().model)
    with Client(address, token=token, timeout=60) as client:
        summary["plaintext"] = outcome(lambda: client.info().model)
    with Client(address, tls_ca=ca, token=token, timeout=60) as client:
        summary["no_client_certificate"] = outcome(lambda: client.info().model)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
