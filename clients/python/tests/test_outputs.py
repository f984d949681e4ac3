"""save_outputs: file names and extensions from the data's own header."""

import os
import tempfile
import unittest

from ditserve.outputs import save_outputs

_PNG = b"\x89PNG\r\n\x1a\n" + b"png body"
_MP4 = b"\x00\x00\x00\x20ftypisom" + b"mp4 body"
_JPEG = b"\xff\xd8\xff\xe0" + b"jpeg body"
_WEBP = b"RIFF\x20\x00\x00\x00WEBPVP8 " + b"webp body"


class SaveOutputsTest(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.dir = directory.name

    def _read(self, path):
        with open(path, "rb") as file:
            return file.read()

    def test_one_output_goes_to_the_path(self):
        path = os.path.join(self.dir, "fox.png")
        self.assertEqual(save_outputs([_PNG], path), [path])
        self.assertEqual(self._read(path), _PNG)

    def test_several_outputs_are_numbered_before_the_extension(self):
        path = os.path.join(self.dir, "fox.png")
        written = save_outputs([_PNG, _PNG + b"2"], path)
        self.assertEqual(
            written,
            [os.path.join(self.dir, "fox-0.png"),
             os.path.join(self.dir, "fox-1.png")],
        )
        self.assertEqual(self._read(written[1]), _PNG + b"2")

    def test_missing_extension_comes_from_the_data(self):
        written = save_outputs([_MP4, _PNG], os.path.join(self.dir, "out"))
        self.assertEqual(
            [os.path.basename(path) for path in written],
            ["out-0.mp4", "out-1.png"],
        )
        self.assertEqual(self._read(written[0]), _MP4)

    def test_extension_that_contradicts_the_data_writes_nothing(self):
        path = os.path.join(self.dir, "waves.png")
        with self.assertRaisesRegex(
            ValueError, r"output 1 is MP4 but path .*waves.png ends in .png"
        ):
            save_outputs([_PNG, _MP4], path)
        self.assertEqual(os.listdir(self.dir), [])

    def test_a_failed_write_leaves_the_file_that_was_there(self):
        path = os.path.join(self.dir, "fox.png")
        with open(path, "wb") as file:
            file.write(b"an older fox")
        # Here the partial file cannot be made; on a user's machine, a full
        # disk stops the write.
        os.makedirs(path + ".part/blocked")
        with self.assertRaises(OSError):
            save_outputs([_PNG], path)
        self.assertEqual(self._read(path), b"an older fox")

    def test_a_folder_is_refused_naming_it(self):
        for folder in (self.dir, self.dir + "/"):
            with self.subTest(folder=folder):
                with self.assertRaisesRegex(
                        ValueError, r"is a folder; name a file in it"):
                    save_outputs([_PNG], folder)
        self.assertEqual(os.listdir(self.dir), [])

    def test_jpeg_and_webp_get_their_extensions(self):
        written = save_outputs([_JPEG, _WEBP], os.path.join(self.dir, "out"))
        self.assertEqual(
            [os.path.basename(path) for path in written],
            ["out-0.jpg", "out-1.webp"],
        )
        self.assertEqual(self._read(written[1]), _WEBP)

    def test_jpeg_takes_either_of_its_extensions(self):
        for name in ("fox.jpg", "fox.JPEG"):
            path = os.path.join(self.dir, name)
            self.assertEqual(save_outputs([_JPEG], path), [path])
        with self.assertRaisesRegex(
            ValueError, r"output 0 is WebP but path .*fox.jpg ends in .jpg"
        ):
            save_outputs([_WEBP], os.path.join(self.dir, "fox.jpg"))

    def test_raw_output_is_refused(self):
        with self.assertRaisesRegex(ValueError, "output 0: neither PNG, JPEG"):
            save_outputs([b"\x00" * 12], os.path.join(self.dir, "x"))


if __name__ == "__main__":
    unittest.main()
