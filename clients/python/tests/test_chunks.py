"""ChunkAssembler: image_chunk messages in any order become the result's
outputs; chunks that contradict each other or the result are refused."""

import unittest

from ditserve.chunks import ChunkAssembler
from ditserve.stubs import generation_pb2

_ImageChunk = generation_pb2.GenerateStreamResponse.ImageChunk


def _chunk(index, offset, total, data):
    return _ImageChunk(
        image_index=index, offset=offset, total_bytes=total, data=data
    )


def _result(*datas):
    return generation_pb2.GenerateResponse(
        images=[generation_pb2.Image(data=data) for data in datas]
    )


class ChunkAssemblerTest(unittest.TestCase):
    def test_reassembles_out_of_order_chunks_beside_unchunked_images(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(1, 6, 10, b"ghij"))
        assembler.add(_chunk(1, 0, 10, b"abc"))
        assembler.add(_chunk(1, 3, 10, b"def"))
        outputs = assembler.outputs(_result(b"small", b"", b"other"))
        self.assertEqual(outputs, [b"small", b"abcdefghij", b"other"])

    def test_without_chunks_returns_the_result_data(self):
        self.assertEqual(ChunkAssembler().outputs(_result(b"a", b"b")),
                         [b"a", b"b"])

    def test_missing_bytes_are_refused(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(0, 0, 10, b"abc"))
        assembler.add(_chunk(0, 5, 10, b"fghij"))
        with self.assertRaisesRegex(ValueError, "leave out bytes at 3..5"):
            assembler.outputs(_result(b""))

    def test_missing_tail_is_refused(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(0, 0, 10, b"abcdef"))
        with self.assertRaisesRegex(ValueError, "bytes 6..10 .* never came"):
            assembler.outputs(_result(b""))

    def test_overlap_is_refused(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(0, 0, 6, b"abcd"))
        assembler.add(_chunk(0, 2, 6, b"cdef"))
        with self.assertRaisesRegex(ValueError, "overlap at 2..4"):
            assembler.outputs(_result(b""))

    def test_contradicting_total_is_refused(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(0, 0, 6, b"abc"))
        with self.assertRaisesRegex(ValueError, "total_bytes 7, earlier 6"):
            assembler.add(_chunk(0, 3, 7, b"def"))

    def test_chunk_past_total_is_refused(self):
        with self.assertRaisesRegex(ValueError, "end past total_bytes 4"):
            ChunkAssembler().add(_chunk(0, 2, 4, b"abc"))

    def test_repeated_offset_is_refused(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(0, 0, 6, b"abc"))
        with self.assertRaisesRegex(ValueError, "offset 0 sent twice"):
            assembler.add(_chunk(0, 0, 6, b"abc"))

    def test_negative_index_or_offset_is_refused(self):
        with self.assertRaisesRegex(ValueError, "image_index is negative"):
            ChunkAssembler().add(_chunk(-1, 0, 3, b"abc"))
        with self.assertRaisesRegex(ValueError, "offset -1 is negative"):
            ChunkAssembler().add(_chunk(0, -1, 3, b"abc"))

    def test_chunks_of_an_image_the_result_lacks_are_refused(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(2, 0, 3, b"abc"))
        with self.assertRaisesRegex(ValueError, "image 2, but the result has"):
            assembler.outputs(_result(b"a"))

    def test_image_both_chunked_and_whole_is_refused(self):
        assembler = ChunkAssembler()
        assembler.add(_chunk(0, 0, 3, b"abc"))
        with self.assertRaisesRegex(ValueError, "in chunks and in the result"):
            assembler.outputs(_result(b"abc"))


if __name__ == "__main__":
    unittest.main()
