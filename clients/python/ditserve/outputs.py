"""Writes generated outputs (PNG, JPEG and WebP images, MP4 videos) to files."""

import contextlib
import os
from typing import Sequence

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# A JPEG opens with its start-of-image marker, then the next marker's 0xFF.
_JPEG_SIGNATURE = b"\xff\xd8\xff"

# The extensions a path may have for each kind of file; the first is the one
# added to a path without an extension.
_EXTENSIONS = {
    "PNG": (".png",),
    "JPEG": (".jpg", ".jpeg"),
    "WebP": (".webp",),
    "MP4": (".mp4",),
}


def file_kind(data: bytes) -> str:
    """"PNG", "JPEG", "WebP" or "MP4" by the data's own header; ValueError
    otherwise (raw RGB8 and latents carry none, so they are written by the
    caller)."""
    if data.startswith(_PNG_SIGNATURE):
        return "PNG"
    if data.startswith(_JPEG_SIGNATURE):
        return "JPEG"
    # A RIFF container: "RIFF", 4 bytes of size, then the form type.
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    # An MP4 file opens with its `ftyp` box: 4 bytes of size, then "ftyp".
    if data[4:8] == b"ftyp":
        return "MP4"
    raise ValueError(
        "neither PNG, JPEG, WebP nor MP4 (output_format rgb8 or latent_f32?); "
        "write its bytes yourself"
    )


def save_outputs(outputs: Sequence[bytes], path: str) -> list:
    """Writes each of `outputs` to a file named after `path`; returns the
    paths written.

    One output goes to `path`; several go to `path` with -0, -1, ... before
    the extension (one per prompt, or per frame of a video in PNG or JPEG
    frames). Without an extension, the one the data needs is added; with
    one, it must match the data (".png"; ".jpg" or ".jpeg"; ".webp"; ".mp4").
    Each file is written whole or not at all: a failed write (a full disk)
    raises OSError and leaves the file that was there, or none.
    """
    if os.path.isdir(path) or not os.path.basename(os.fspath(path)):
        raise ValueError(f"path {path} is a folder; name a file in it")
    stem, extension = os.path.splitext(os.fspath(path))
    targets = []
    # Every output is checked before any file is written.
    for index, data in enumerate(outputs):
        try:
            kind = file_kind(data)
        except ValueError as error:
            raise ValueError(f"output {index}: {error}") from None
        allowed = _EXTENSIONS[kind]
        if extension and extension.lower() not in allowed:
            raise ValueError(
                f"output {index} is {kind} but path {path} ends in {extension}"
            )
        suffix = f"-{index}" if len(outputs) > 1 else ""
        targets.append(f"{stem}{suffix}{extension or allowed[0]}")
    for target, data in zip(targets, outputs):
        _write_whole(target, data)
    return targets


def _write_whole(target: str, data: bytes) -> None:
    """Writes `data` to `target` through `target`.part, renamed once whole."""
    partial = f"{target}.part"
    try:
        with open(partial, "wb") as file:
            file.write(data)
        os.replace(partial, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise
