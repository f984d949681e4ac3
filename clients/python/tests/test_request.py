"""build_request: fields by name, the server's defaults for omitted ones, and
errors that name the field."""

import unittest

from ditserve.request import build_request
from ditserve.v1 import input_config_pb2


class BuildRequestTest(unittest.TestCase):
    def test_sets_named_fields_and_leaves_the_rest_unset(self):
        request = build_request(
            ["a fox", "a hare"],
            {"height": 64, "width": 48, "seed": 2**63, "guidance_scale": 3.5,
             "negative_prompt": ["blur", "noise"], "fps": None},
        )
        self.assertEqual(list(request.prompt), ["a fox", "a hare"])
        self.assertEqual((request.height, request.width), (64, 48))
        self.assertEqual(request.seed, 2**63)
        self.assertAlmostEqual(request.guidance_scale, 3.5)
        self.assertEqual(list(request.negative_prompt), ["blur", "noise"])
        # None and omitted fields stay unset, so the server's defaults apply.
        self.assertFalse(request.HasField("fps"))
        self.assertFalse(request.HasField("num_inference_steps"))

    def test_one_string_is_one_prompt(self):
        request = build_request("a fox", {"negative_prompt": "blur"})
        self.assertEqual(list(request.prompt), ["a fox"])
        self.assertEqual(list(request.negative_prompt), ["blur"])

    def test_output_format_by_short_name_full_name_or_number(self):
        mp4 = input_config_pb2.OUTPUT_FORMAT_MP4
        for value in ("mp4", "MP4", "OUTPUT_FORMAT_MP4", mp4):
            request = build_request("x", {"output_format": value})
            self.assertEqual(request.output_format, mp4, value)
        request = build_request("x", {"output_format": "latent_f32"})
        self.assertEqual(
            request.output_format, input_config_pb2.OUTPUT_FORMAT_LATENT_F32
        )

    def test_unknown_field_is_named_with_the_known_ones(self):
        with self.assertRaisesRegex(
            ValueError, r"^num_steps: GenerateRequest has no such field; "
            r"known: .*num_inference_steps"
        ):
            build_request("x", {"num_steps": 4})

    def test_prompt_as_a_field_points_to_the_first_argument(self):
        with self.assertRaisesRegex(ValueError, "^prompt: pass the prompts"):
            build_request([], {"prompt": ["x"]})

    def test_wrong_type_names_the_field(self):
        with self.assertRaisesRegex(TypeError, "^height: '64' has type str"):
            build_request("x", {"height": "64"})
        with self.assertRaisesRegex(TypeError, "^use_dynamic_cfg: "):
            build_request("x", {"use_dynamic_cfg": "yes"})

    def test_a_prompt_of_the_wrong_type_names_the_prompt(self):
        with self.assertRaisesRegex(TypeError, "^prompt: pass text"):
            build_request(b"\xff\xfe", {})
        with self.assertRaisesRegex(TypeError, "^prompt: 1 has type int"):
            build_request([1], {})
        with self.assertRaisesRegex(ValueError, "^prompt: .*surrogates"):
            build_request("\ud800", {})
        with self.assertRaisesRegex(ValueError, "^negative_prompt: "):
            build_request("x", {"negative_prompt": "\ud800"})

    def test_out_of_range_names_the_field(self):
        with self.assertRaisesRegex(ValueError, "^seed: .*-1"):
            build_request("x", {"seed": -1})
        with self.assertRaisesRegex(ValueError, "^width: .*"):
            build_request("x", {"width": 2**40})

    def test_unknown_output_format_lists_the_choices(self):
        with self.assertRaisesRegex(
            ValueError,
            r"^output_format: 'gif' is not one of png, rgb8, latent_f32, mp4, "
            r"jpeg, webp$",
        ):
            build_request("x", {"output_format": "gif"})


if __name__ == "__main__":
    unittest.main()
