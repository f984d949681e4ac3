"""Calls Generate through ADDRESS, a relay the test stalls once the run has
started, with no timeout and the client's keepalive pings every 10 s
answered within 1 s; prints the call's outcome as JSON: its gRPC code and
the seconds it took."""

import json
import sys
import time

from ditserve import Client, DitserveError


def main():
    (address,) = sys.argv[1:]
    started = time.monotonic()
    with Client(address, keepalive=10, keepalive_timeout=1) as client:
        try:
            client.generate("a long one", height=1024, width=1024,
                            num_inference_steps=200)
            code = "OK"
        except DitserveError as error:
            code = error.code.name
    print(json.dumps({"code": code, "seconds": time.monotonic() - started}))


if __name__ == "__main__":
    main()
