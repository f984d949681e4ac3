#!/usr/bin/env python3
"""Generates a video (a CogVideoX model) and saves it as MP4.

  save_video.py "waves on a rocky shore" --frames 9 -W 256 -H 160 \
      --steps 8 -o waves.mp4
"""

import argparse
import sys

from ditserve import Client, DitserveError, save_outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt")
    parser.add_argument("--server", default="localhost:50051")
    parser.add_argument("--tls_ca", help="CA certificate (PEM) for TLS")
    parser.add_argument("--token", help="bearer token sent with every call")
    parser.add_argument("--frames", type=int, help="frame_step x N + 1")
    parser.add_argument("--fps", type=int)
    parser.add_argument("-W", "--width", type=int)
    parser.add_argument("-H", "--height", type=int)
    parser.add_argument("--steps", type=int)
    parser.add_argument("-o", "--output", default="video.mp4")
    args = parser.parse_args()

    with Client(args.server, tls_ca=args.tls_ca, token=args.token) as client:
        try:
            info = client.info()
            if info.defaults.frame_step == 0:
                raise SystemExit(f"{info.model} makes images, not videos")
            print(f"{info.model}: frames are {info.defaults.frame_step} x N "
                  f"+ 1, default {info.defaults.num_frames}", file=sys.stderr)
            # A video takes long: stream() reports every step, and puts an
            # MP4 over 1 MiB, which the server sends in chunks, together.
            videos = client.stream(
                args.prompt, output_format="mp4", num_frames=args.frames,
                fps=args.fps, width=args.width, height=args.height,
                num_inference_steps=args.steps,
                on_progress=lambda p: print(
                    f"\rstep {p.step}/{p.total_steps}", end="",
                    file=sys.stderr, flush=True),
            )
        except DitserveError as error:
            raise SystemExit(f"\ngenerate failed: {error}")
    print(file=sys.stderr)
    for path in save_outputs(videos, args.output):
        print(path)


if __name__ == "__main__":
    main()
