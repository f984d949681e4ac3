#!/usr/bin/env python3
"""Generates one image per prompt with Generate and saves them as PNG.

  generate_image.py "a lighthouse on a cliff at dusk" -W 256 -H 256 \
      --steps 4 --seed 1 -o lighthouse.png
"""

import argparse

from ditserve import Client, DitserveError, save_outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompts", nargs="+")
    parser.add_argument("--server", default="localhost:50051")
    parser.add_argument("--tls_ca", help="CA certificate (PEM) for TLS")
    parser.add_argument("--token", help="bearer token sent with every call")
    parser.add_argument("-W", "--width", type=int)
    parser.add_argument("-H", "--height", type=int)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--seed", type=int)
    parser.add_argument("-o", "--output", default="out.png")
    args = parser.parse_args()

    # Options left out are None: the server applies the model's defaults.
    with Client(args.server, tls_ca=args.tls_ca, token=args.token) as client:
        try:
            images = client.generate(
                args.prompts, width=args.width, height=args.height,
                num_inference_steps=args.steps, seed=args.seed,
            )
        except DitserveError as error:
            raise SystemExit(f"generate failed: {error}")
    for path in save_outputs(images, args.output):
        print(path)


if __name__ == "__main__":
    main()
