#include "core/io/image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace ditserve::io {
namespace {

using ::testing::HasSubstr;

TEST(PngTest, EncodeThenDecodeGivesBackThePixels) {
  at::Tensor rgb = torch::randint(0, 256, {5, 7, 3}, torch::kUInt8);
  auto png = EncodePng(rgb);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_EQ(png->substr(1, 3), "PNG");
  auto decoded = DecodePng(*png);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(torch::equal(*decoded, rgb));
}

TEST(PngTest, NonContiguousInputIsEncodedByValue) {
  at::Tensor chw = torch::randint(0, 256, {3, 4, 6}, torch::kUInt8);
  at::Tensor hwc = chw.permute({1, 2, 0});
  auto png = EncodePng(hwc);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_TRUE(torch::equal(*DecodePng(*png), hwc));
}

TEST(PngTest, EncodingRejectsWrongShapeAndDtype) {
  EXPECT_EQ(EncodePng(torch::zeros({4, 4, 4}, torch::kUInt8)).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto float_image = EncodePng(torch::zeros({4, 4, 3}));
  EXPECT_EQ(float_image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(float_image.status().message(), HasSubstr("uint8"));
  EXPECT_EQ(EncodePng(torch::zeros({0, 4, 3}, torch::kUInt8)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PngTest, DecodingGarbageIsAnError) {
  auto decoded = DecodePng("definitely not a PNG");
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(decoded.status().message(), HasSubstr("PNG"));
}

TEST(PngTest, DecodingATruncatedPngIsAnError) {
  auto png = EncodePng(torch::randint(0, 256, {16, 16, 3}, torch::kUInt8));
  ASSERT_TRUE(png.ok());
  EXPECT_FALSE(DecodePng(png->substr(0, png->size() / 2)).ok());
}

TEST(ImagePostprocessTest, DenormalizeMapsMinusOneToOneOntoZeroToOne) {
  at::Tensor decoded =
      torch::tensor({-3.0f, -1.0f, 0.0f, 0.5f, 1.0f, 2.0f}).view({1, 3, 1, 2});
  auto image = DenormalizeImage(decoded);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_TRUE(torch::equal(
      *image,
      torch::tensor({0.0f, 0.0f, 0.5f, 0.75f, 1.0f, 1.0f}).view({1, 3, 1, 2})));
}

TEST(ImagePostprocessTest, ToRgb8RoundsHalvesToEvenAndMovesChannelsLast) {
  // 0.5 * 255 = 127.5 rounds to 128; 1.5 / 255 * 255 is 1.5 -> 2.
  at::Tensor image = torch::tensor({0.0f, 0.5f, 1.0f}).view({1, 3, 1, 1});
  auto rgb = ToRgb8(image);
  ASSERT_TRUE(rgb.ok()) << rgb.status();
  EXPECT_EQ(rgb->sizes(), (std::vector<int64_t>{1, 1, 1, 3}));
  EXPECT_EQ(rgb->scalar_type(), torch::kUInt8);
  EXPECT_TRUE(torch::equal(
      *rgb, torch::tensor({0, 128, 255}, torch::kUInt8).view({1, 1, 1, 3})));
}

TEST(ImagePostprocessTest, WrongLayoutIsAnError) {
  EXPECT_EQ(ToRgb8(torch::zeros({1, 4, 2, 2})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DenormalizeImage(torch::zeros({3, 2, 2})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToRgb8(torch::zeros({1, 3, 2, 2}, torch::kUInt8)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ditserve::io
