"""Writes generated outputs (PNG images, MP4 videos) to files."""

import os
from typing import Sequence

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def file_extension(data: bytes) -> str:
    """".png" or ".mp4" by the data's own header; ValueError otherwise (raw
    RGB8 and latents carry none, so they are written by the caller)."""
    if data.startswith(_PNG_SIGNATURE):
        return ".png"
    # An MP4 file opens with its `ftyp` box: 4 bytes of size, then "ftyp".
    if data[4:8] == b"ftyp":
        return ".mp4"
    raise ValueError(
        "neither PNG nor MP4 (output_format rgb8 or latent_f32?); write "
        "its bytes yourself"
    )


def save_outputs(outputs: Sequence[bytes], path: str) -> list:
    """Writes each of `outputs` to a file named after `path`; returns the
    paths written.

    One output goes to `path`; several go to `path` with -0, -1, ... before
    the extension (one per prompt, or per frame of a video in PNG frames).
    Without an extension, the one the data needs is added; with one, it
    must match the data (".png" for PNG, ".mp4" for MP4).
    """
    stem, extension = os.path.splitext(os.fspath(path))
    targets = []
    # Every output is checked before any file is written.
    for index, data in enumerate(outputs):
        try:
            wanted = file_extension(data)
        except ValueError as error:
            raise ValueError(f"output {index}: {error}") from None
        if extension and extension.lower() != wanted:
            raise ValueError(
                f"output {index} is {wanted[1:].upper()} but path {path} "
                f"ends in {extension}"
            )
        suffix = f"-{index}" if len(outputs) > 1 else ""
        targets.append(f"{stem}{suffix}{extension or wanted}")
    for target, data in zip(targets, outputs):
        with open(target, "wb") as file:
            file.write(data)
    return targets
