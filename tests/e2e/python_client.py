#!/usr/bin/env python3
"""Runs the ditserve Python package (clients/python) against a serving host
and prints one JSON object of what each call gave; exits non-zero when a
call that should work fails. python_client_e2e_test.cc checks the JSON.

  PYTHONPATH=clients/python:build/python python_client.py HOST:PORT OUT_DIR
"""

import json
import struct
import sys

from ditserve import Client, DitserveError, save_outputs

PROMPT = "a lighthouse at dusk"
SMALL = {"height": 64, "width": 48, "num_inference_steps": 2, "seed": 3,
         "max_sequence_length": 32}
# RGB8 of 640 x 576 is 1.1 MB, over the host's 1 MiB stream chunks.
CHUNKED = dict(SMALL, height=640, width=576, output_format="rgb8")


def png_summary(data):
    # IHDR's width and height follow the signature and the chunk header.
    width, height = struct.unpack(">II", data[16:24])
    return {"png_signature": data[:8].hex(), "width": width, "height": height}


def error_summary(call):
    try:
        call()
    except DitserveError as error:
        return {"code": error.code.name, "message": error.message,
                "fields": error.fields}
    except (ValueError, TypeError) as error:
        return {"code": type(error).__name__, "message": str(error)}
    return None


def main():
    address, out_dir = sys.argv[1:]
    summary = {}
    # A host without --auth_token_file ignores a token.
    with Client(address, token="e2e-token", timeout=120) as client:
        summary["health"] = client.health()
        summary["generation_health"] = client.health("ditserve.v1.Generation")
        summary["model"] = client.info().model

        images = client.generate(PROMPT, **SMALL)
        summary["generate"] = [png_summary(image) for image in images]
        summary["saved"] = save_outputs(images, f"{out_dir}/lighthouse.png")

        steps = []
        streamed = client.stream(
            PROMPT, on_progress=lambda p: steps.append([p.step, p.total_steps]),
            **SMALL)
        summary["progress"] = steps
        summary["stream"] = [png_summary(image) for image in streamed]
        summary["stream_equals_generate"] = streamed == images

        chunked = client.stream(PROMPT, **CHUNKED)
        summary["chunked_bytes"] = [len(output) for output in chunked]
        summary["chunked_equals_generate"] = (
            chunked == client.generate(PROMPT, **CHUNKED))

        # A preview over the chunk size comes in slices, put back together.
        previews = []
        previewed = client.stream(PROMPT, on_partial_image=previews.append,
                                  **dict(CHUNKED, partial_images=1))
        summary["previews"] = [
            {"index": p.partial_image_index, "step": p.step,
             "bytes": len(p.image.data), "width": p.image.width,
             "height": p.image.height} for p in previews]
        summary["preview_is_not_the_image"] = all(
            p.image.data != previewed[0] for p in previews)
        summary["previewed_equals_chunked"] = previewed == chunked
        summary["unstreamed_previews"] = error_summary(
            lambda: client.generate(PROMPT, **dict(SMALL, partial_images=1)))

        frozen = client.validate(PROMPT, **dict(SMALL, partial_images=1))
        summary["validated"] = {"height": frozen.height,
                                "width": frozen.width,
                                "steps": frozen.num_inference_steps,
                                "seeds": list(frozen.seeds),
                                "previews": list(frozen.partial_image_steps)}
        summary["validate_only_in_generate"] = error_summary(
            lambda: client.generate(PROMPT, validate_only=True, **SMALL))

        summary["bad_height"] = error_summary(
            lambda: client.generate(PROMPT, **dict(SMALL, height=63)))
        summary["unknown_field"] = error_summary(
            lambda: client.generate(PROMPT, heigth=64))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
