#include "core/video/webp_encoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tests/support/decoded_images.h"
#include "tests/unit/video/moving_square.h"

namespace ditserve::video {
namespace {

using ::testing::HasSubstr;

// The PSNR each decoded frame keeps at quality 90. Measured: 36.9 and 36.0 dB
// for the stills, 33.2 dB for the worst frame of the animation (the recorded
// psnr_db properties). Against the next frame's pixels the frames give at
// most 22.0 dB, with red and blue swapped 12.3 dB.
constexpr double kMinPsnrAtQuality90 = 30.0;

absl::StatusOr<std::string> Encode(const std::string& rgb, int frames,
                                   int height, int width, int fps,
                                   int quality) {
  return EncodeWebp(RgbVideo{Pixels(rgb), frames, height, width}, fps, quality);
}

// Frame `index` of the RGB8 frames `video` of `height` × `width`.
std::string Frame(const std::string& video, int index, int height, int width) {
  const size_t size = static_cast<size_t>(height) * width * 3;
  return video.substr(index * size, size);
}

TEST(WebpEncoderTest, OneFrameIsAStillImage) {
  for (const auto& [height, width] : {std::pair{48, 64}, std::pair{33, 47}}) {
    const std::string rgb = MovingSquare(1, height, width);
    auto webp = Encode(rgb, 1, height, width, 1, 90);
    ASSERT_TRUE(webp.ok()) << webp.status();
    EXPECT_EQ(webp->substr(0, 4), "RIFF");
    EXPECT_EQ(webp->substr(8, 4), "WEBP");
    auto decoded = testing::DecodeWebp(*webp);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_FALSE(decoded->animated);
    EXPECT_EQ(decoded->height, height);
    EXPECT_EQ(decoded->width, width);
    ASSERT_EQ(decoded->frames.size(), 1u);
    const double psnr = testing::Psnr(rgb, decoded->frames[0]);
    RecordProperty(absl::StrCat("psnr_db_", height, "x", width),
                   std::to_string(psnr));
    EXPECT_GE(psnr, kMinPsnrAtQuality90) << height << "x" << width;
  }
}

TEST(WebpEncoderTest, FramesBecomeALoopingAnimationAtTheFrameRate) {
  constexpr int kFrames = 9;
  constexpr int kHeight = 32;
  constexpr int kWidth = 48;
  const std::string rgb = MovingSquare(kFrames, kHeight, kWidth);
  // 8 fps: 125 ms a frame. 16 fps: 62.5 ms, which whole milliseconds
  // alternate around.
  for (const int fps : {8, 16}) {
    auto webp = Encode(rgb, kFrames, kHeight, kWidth, fps, 90);
    ASSERT_TRUE(webp.ok()) << webp.status();
    auto decoded = testing::DecodeWebp(*webp);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_TRUE(decoded->animated);
    EXPECT_EQ(decoded->loop_count, 0u) << "0 loops forever";
    EXPECT_EQ(decoded->height, kHeight);
    EXPECT_EQ(decoded->width, kWidth);
    ASSERT_EQ(decoded->frames.size(), size_t{kFrames}) << fps << " fps";
    for (int i = 0; i < kFrames; ++i) {
      EXPECT_EQ(decoded->end_ms[i], std::llround((i + 1) * 1000.0 / fps))
          << "frame " << i << " at " << fps << " fps";
      const double psnr =
          testing::Psnr(Frame(rgb, i, kHeight, kWidth), decoded->frames[i]);
      EXPECT_GE(psnr, kMinPsnrAtQuality90) << "frame " << i;
      if (i == 0 || i == kFrames - 1) {
        RecordProperty(absl::StrCat("psnr_db_frame", i, "_", fps, "fps"),
                       std::to_string(psnr));
      }
    }
  }
}

TEST(WebpEncoderTest, QualityTradesBytesForFidelity) {
  const std::string rgb = MovingSquare(1, 64, 96);
  auto low = Encode(rgb, 1, 64, 96, 1, 20);
  auto high = Encode(rgb, 1, 64, 96, 1, 98);
  ASSERT_TRUE(low.ok()) << low.status();
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_LT(low->size() * 2, high->size());
  auto low_decoded = testing::DecodeWebp(*low);
  auto high_decoded = testing::DecodeWebp(*high);
  ASSERT_TRUE(low_decoded.ok() && high_decoded.ok());
  EXPECT_LT(testing::Psnr(rgb, low_decoded->frames[0]) + 3,
            testing::Psnr(rgb, high_decoded->frames[0]));
}

TEST(WebpEncoderTest, SameInputGivesTheSameBytes) {
  const std::string rgb = MovingSquare(5, 32, 48);
  auto first = Encode(rgb, 5, 32, 48, 8, 90);
  auto second = Encode(rgb, 5, 32, 48, 8, 90);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(*first == *second);
}

TEST(WebpEncoderTest, BadInputIsInvalidArgumentNamingTheField) {
  const std::vector<uint8_t> rgb(2 * 6 * 6 * 3);
  struct Case {
    RgbVideo video;
    int fps;
    int quality;
    const char* field;
  };
  const Case cases[] = {
      {{nullptr, 1, 6, 6}, 8, 90, "data"},
      {{rgb.data(), 0, 6, 6}, 8, 90, "frames"},
      {{rgb.data(), 1, 0, 6}, 8, 90, "height"},
      {{rgb.data(), 1, 6, 16384}, 8, 90, "width must be 1..16383"},
      {{rgb.data(), 2, 6, 6}, 0, 90, "fps"},
      {{rgb.data(), 2, 6, 6}, 121, 90, "fps"},
      {{rgb.data(), 1, 6, 6}, 8, 0, "quality must be 1..100"},
      {{rgb.data(), 1, 6, 6}, 8, 101, "quality must be 1..100"},
  };
  for (const Case& c : cases) {
    auto webp = EncodeWebp(c.video, c.fps, c.quality);
    EXPECT_EQ(webp.status().code(), absl::StatusCode::kInvalidArgument)
        << c.field << ": " << webp.status();
    EXPECT_THAT(webp.status().message(), HasSubstr(c.field));
  }
}

}  // namespace
}  // namespace ditserve::video
