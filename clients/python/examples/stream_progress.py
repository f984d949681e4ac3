#!/usr/bin/env python3
"""Generates with GenerateStream, printing each denoising step as it ends.

  stream_progress.py "a red fox in snow" --steps 8 -o fox.png
"""

import argparse
import sys

from ditserve import Client, DitserveError, save_outputs


def print_progress(progress):
    print(
        f"\rstep {progress.step}/{progress.total_steps} "
        f"({progress.elapsed_seconds:.1f} s)",
        end="", file=sys.stderr, flush=True,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompts", nargs="+")
    parser.add_argument("--server", default="localhost:50051")
    parser.add_argument("--tls_ca", help="CA certificate (PEM) for TLS")
    parser.add_argument("--token", help="bearer token sent with every call")
    parser.add_argument("--steps", type=int)
    parser.add_argument("-o", "--output", default="out.png")
    args = parser.parse_args()

    with Client(args.server, tls_ca=args.tls_ca, token=args.token) as client:
        try:
            images = client.stream(
                args.prompts, on_progress=print_progress,
                num_inference_steps=args.steps,
            )
        except DitserveError as error:
            raise SystemExit(f"\ngenerate failed: {error}")
    print(file=sys.stderr)
    for path in save_outputs(images, args.output):
        print(path)


if __name__ == "__main__":
    main()
