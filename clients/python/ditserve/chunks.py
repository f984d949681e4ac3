"""Reassembles the image_chunk and partial_image messages of GenerateStream.

The server sends an output that would take the result past 1 MiB as
image_chunk messages (image_index, offset, total_bytes, data) before the
result, whose image then has empty data, and a preview larger than 1 MiB as
several partial_image messages, in order, each with a slice of the data.
"""

from typing import Optional

from ditserve.stubs import generation_pb2

_ImageChunk = generation_pb2.GenerateStreamResponse.ImageChunk
_PartialImage = generation_pb2.GenerateStreamResponse.PartialImage


class PartialImageAssembler:
    """Joins the slices of each preview of one stream."""

    def __init__(self):
        # (partial_image_index, prompt_index, frame_index) -> bytes so far;
        # the PNG frames of a video preview are outputs of one prompt.
        self._started = {}

    def add(self, partial: _PartialImage) -> Optional[_PartialImage]:
        """The whole preview once `partial` completes it, else None; raises
        ValueError for a slice out of order or past total_bytes."""
        key = (
            partial.partial_image_index,
            partial.image.prompt_index,
            partial.image.frame_index,
        )
        where = (
            f"partial_image {partial.partial_image_index} of output "
            f"{partial.image.prompt_index} frame {partial.image.frame_index}"
        )
        data = self._started.pop(key, b"")
        if partial.offset != len(data):
            raise ValueError(
                f"{where}: a slice at {partial.offset}, expected "
                f"{len(data)}"
            )
        data += partial.image.data
        if len(data) > partial.total_bytes:
            raise ValueError(
                f"{where}: {len(data)} bytes, past total_bytes "
                f"{partial.total_bytes}"
            )
        if len(data) < partial.total_bytes:
            self._started[key] = data
            return None
        whole = _PartialImage()
        whole.CopyFrom(partial)
        whole.offset = 0
        whole.image.data = data
        return whole


class ChunkAssembler:
    """Collects the chunks of one stream; `outputs` puts them together."""

    def __init__(self):
        # image_index -> (total_bytes, {offset: data})
        self._images = {}

    def add(self, chunk: _ImageChunk) -> None:
        """Keeps `chunk`; raises ValueError when it contradicts the others."""
        where = f"image_chunk of image {chunk.image_index}"
        if chunk.image_index < 0:
            raise ValueError(f"{where}: image_index is negative")
        if chunk.offset < 0:
            raise ValueError(f"{where}: offset {chunk.offset} is negative")
        total, pieces = self._images.setdefault(
            chunk.image_index, (chunk.total_bytes, {})
        )
        if chunk.total_bytes != total:
            raise ValueError(
                f"{where}: total_bytes {chunk.total_bytes}, earlier {total}"
            )
        end = chunk.offset + len(chunk.data)
        if end > total:
            raise ValueError(
                f"{where}: bytes {chunk.offset}..{end} end past total_bytes "
                f"{total}"
            )
        if chunk.offset in pieces:
            raise ValueError(f"{where}: offset {chunk.offset} sent twice")
        pieces[chunk.offset] = chunk.data

    def outputs(self, result: generation_pb2.GenerateResponse) -> list:
        """The data of every image of `result` (bytes, in its order), chunked
        ones put together; raises ValueError on gaps, overlaps or chunks of
        an image the result does not have."""
        outputs = [image.data for image in result.images]
        for index, (total, pieces) in sorted(self._images.items()):
            if index >= len(outputs):
                raise ValueError(
                    f"image_chunk of image {index}, but the result has "
                    f"{len(outputs)} images"
                )
            if outputs[index]:
                raise ValueError(
                    f"image {index} came in chunks and in the result"
                )
            outputs[index] = _join(index, total, pieces)
        return outputs


def _join(index: int, total: int, pieces: dict) -> bytes:
    data = bytearray()
    for offset in sorted(pieces):
        if offset != len(data):
            raise ValueError(
                f"image {index}: chunks "
                + ("overlap" if offset < len(data) else "leave out bytes")
                + f" at {min(offset, len(data))}..{max(offset, len(data))}"
            )
        data += pieces[offset]
    if len(data) != total:
        raise ValueError(
            f"image {index}: bytes {len(data)}..{total} of total_bytes "
            f"{total} never came"
        )
    return bytes(data)
