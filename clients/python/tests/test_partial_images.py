"""PartialImageAssembler: the slices of each preview, in order, become one
PartialImage; slices out of order or past the preview's size are refused."""

import unittest

from ditserve.chunks import PartialImageAssembler
from ditserve.stubs import generation_pb2

_PartialImage = generation_pb2.GenerateStreamResponse.PartialImage


def _slice(index, prompt, offset, total, data, step=3, frame=0):
    return _PartialImage(
        partial_image_index=index,
        step=step,
        image=generation_pb2.Image(
            data=data, prompt_index=prompt, frame_index=frame, width=64
        ),
        offset=offset,
        total_bytes=total,
    )


class PartialImageAssemblerTest(unittest.TestCase):
    def test_a_preview_in_one_slice_comes_back_whole(self):
        whole = PartialImageAssembler().add(_slice(0, 0, 0, 3, b"abc"))
        self.assertEqual(whole.image.data, b"abc")
        self.assertEqual((whole.step, whole.image.width), (3, 64))

    def test_slices_of_two_outputs_interleaved_are_joined_apart(self):
        assembler = PartialImageAssembler()
        self.assertIsNone(assembler.add(_slice(1, 0, 0, 5, b"abc")))
        self.assertIsNone(assembler.add(_slice(1, 1, 0, 4, b"wx")))
        first = assembler.add(_slice(1, 0, 3, 5, b"de"))
        second = assembler.add(_slice(1, 1, 2, 4, b"yz"))
        self.assertEqual(first.image.data, b"abcde")
        self.assertEqual(first.offset, 0)
        self.assertEqual(second.image.data, b"wxyz")
        self.assertEqual(second.image.prompt_index, 1)

    def test_the_png_frames_of_a_video_preview_are_joined_apart(self):
        assembler = PartialImageAssembler()
        self.assertIsNone(assembler.add(_slice(0, 0, 0, 4, b"ab", frame=0)))
        self.assertIsNone(assembler.add(_slice(0, 0, 0, 3, b"x", frame=1)))
        first = assembler.add(_slice(0, 0, 2, 4, b"cd", frame=0))
        second = assembler.add(_slice(0, 0, 1, 3, b"yz", frame=1))
        self.assertEqual(first.image.data, b"abcd")
        self.assertEqual(second.image.data, b"xyz")
        self.assertEqual(second.image.frame_index, 1)

    def test_a_slice_out_of_order_is_refused(self):
        assembler = PartialImageAssembler()
        assembler.add(_slice(0, 0, 0, 6, b"ab"))
        with self.assertRaisesRegex(ValueError, "slice at 4, expected 2"):
            assembler.add(_slice(0, 0, 4, 6, b"ef"))

    def test_bytes_past_the_total_are_refused(self):
        with self.assertRaisesRegex(ValueError, "past total_bytes 2"):
            PartialImageAssembler().add(_slice(0, 0, 0, 2, b"abc"))


if __name__ == "__main__":
    unittest.main()
