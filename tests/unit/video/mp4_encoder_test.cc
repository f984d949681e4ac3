#include "core/video/mp4_encoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tests/support/decoded_images.h"
#include "tests/unit/video/moving_square.h"

namespace ditserve::video {
namespace {

using ::testing::HasSubstr;

struct Shape {
  int frames;
  int height;
  int width;
  int fps;
};

void PrintTo(const Shape& shape, std::ostream* out) {
  *out << shape.frames << " frames of " << shape.width << "x" << shape.height
       << " at " << shape.fps << " fps";
}

absl::StatusOr<std::string> Encode(const std::string& rgb, const Shape& shape) {
  return EncodeMp4(
      RgbVideo{Pixels(rgb), shape.frames, shape.height, shape.width},
      shape.fps);
}

std::string MakeVideo(const Shape& shape) {
  return MovingSquare(shape.frames, shape.height, shape.width);
}

// The command's stdout; an error when it cannot run or exits non-zero (127: a
// tool deploy/install-deps.sh installs is missing).
absl::StatusOr<std::string> RunTool(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("popen failed: " + command);
  std::string output;
  char buffer[1 << 16];
  size_t count = 0;
  while ((count = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, count);
  }
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(
        command, " failed (exit ", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
        "); are ffmpeg and ffprobe installed (deploy/install-deps.sh)?"));
  }
  return output;
}

// A file holding `bytes` under the test's temporary directory, removed at the
// end; the pid keeps concurrent runs of the same test apart.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& bytes)
      : path_(absl::StrCat(::testing::TempDir(), "mp4_encoder_test_",
                           ::getpid(), "_", name)) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class Mp4EncoderProbeTest : public ::testing::TestWithParam<Shape> {};

TEST_P(Mp4EncoderProbeTest,
       FfprobeSeesH264Yuv420pOfTheSizeFramesRateAndColours) {
  const Shape shape = GetParam();
  auto mp4 = Encode(MakeVideo(shape), shape);
  ASSERT_TRUE(mp4.ok()) << mp4.status();
  const TempFile file(
      absl::StrCat("probe_", shape.width, "x", shape.height, ".mp4"), *mp4);
  auto probe = RunTool(absl::StrCat(
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
      "stream=codec_name,pix_fmt,width,height,nb_read_frames,r_frame_rate,"
      "color_range,color_space,color_primaries,color_transfer -of json '",
      file.path(), "'"));
  ASSERT_TRUE(probe.ok()) << probe.status();
  const nlohmann::json streams = nlohmann::json::parse(*probe).at("streams");
  ASSERT_EQ(streams.size(), 1u) << *probe;
  const nlohmann::json& stream = streams[0];
  EXPECT_EQ(stream.at("codec_name"), "h264");
  EXPECT_EQ(stream.at("pix_fmt"), "yuv420p");
  EXPECT_EQ(stream.at("width"), shape.width);
  EXPECT_EQ(stream.at("height"), shape.height);
  EXPECT_EQ(stream.at("nb_read_frames"), std::to_string(shape.frames));
  EXPECT_EQ(stream.at("r_frame_rate"), absl::StrCat(shape.fps, "/1"));
  // Fully tagged, so that no player guesses: the BT.601 limited-range
  // matrix of sRGB pixels.
  EXPECT_EQ(stream.at("color_range"), "tv");
  EXPECT_EQ(stream.at("color_space"), "smpte170m");
  EXPECT_EQ(stream.at("color_primaries"), "bt709");
  EXPECT_EQ(stream.at("color_transfer"), "iec61966-2-1");
}

INSTANTIATE_TEST_SUITE_P(Shapes, Mp4EncoderProbeTest,
                         ::testing::Values(Shape{9, 32, 48, 8},
                                           Shape{17, 48, 64, 16}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           const Shape& s = info.param;
                           return absl::StrCat(s.frames, "_frames_", s.width,
                                               "x", s.height, "_", s.fps,
                                               "_fps");
                         });

TEST(Mp4EncoderTest, DecodedFramesMatchTheInput) {
  const Shape shape{9, 32, 48, 8};
  const std::string rgb = MakeVideo(shape);
  auto mp4 = Encode(rgb, shape);
  ASSERT_TRUE(mp4.ok()) << mp4.status();
  const TempFile file("decode.mp4", *mp4);
  auto decoded = RunTool(absl::StrCat("ffmpeg -v error -i '", file.path(),
                                      "' -f rawvideo -pix_fmt rgb24 -"));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), rgb.size()) << "frames or size differ";
  // Measured 38.0 dB; chroma subsampling alone gives 38.8 dB. Decoding with
  // the wrong range or matrix (BT.709) gives about 28 dB.
  const double psnr = testing::Psnr(rgb, *decoded);
  RecordProperty("psnr_db", std::to_string(psnr));
  EXPECT_GE(psnr, 35.0);
}

// malloc fills the memory it hands out with a different byte for each encode
// (and serves large blocks from the heap, not as fresh zeroed pages), so that
// a read of uninitialised memory anywhere in the pipeline changes the bytes:
// x264's AVX-512 mbtree code did (see kMbtree in mp4_encoder.cc).
TEST(Mp4EncoderTest, SameInputGivesTheSameBytes) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's malloc, "
                  "whose mallopt perturbation this test needs";
#endif
  const Shape shape{17, 48, 64, 16};
  const std::string rgb = MakeVideo(shape);
  ASSERT_EQ(::mallopt(M_MMAP_THRESHOLD, 1 << 30), 1);
  ASSERT_EQ(::mallopt(M_PERTURB, 0x01), 1);
  auto first = Encode(rgb, shape);
  ASSERT_EQ(::mallopt(M_PERTURB, 0xa5), 1);
  auto second = Encode(rgb, shape);
  ::mallopt(M_PERTURB, 0);
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(*first == *second) << "the two encodings differ";
}

// The top-level box types of an MP4 file, in order.
std::vector<std::string> TopLevelBoxes(const std::string& mp4) {
  std::vector<std::string> types;
  size_t offset = 0;
  while (offset + 8 <= mp4.size()) {
    uint64_t size = 0;
    for (int i = 0; i < 4; ++i) {
      size = size << 8 | static_cast<uint8_t>(mp4[offset + i]);
    }
    types.push_back(mp4.substr(offset + 4, 4));
    if (size == 1 && offset + 16 <= mp4.size()) {  // 64-bit size follows.
      size = 0;
      for (int i = 8; i < 16; ++i) {
        size = size << 8 | static_cast<uint8_t>(mp4[offset + i]);
      }
    }
    if (size < 8) break;  // 0: to the end of the file.
    offset += size;
  }
  return types;
}

TEST(Mp4EncoderTest, MoovBoxComesBeforeTheMediaData) {
  const Shape shape{9, 32, 48, 8};
  auto mp4 = Encode(MakeVideo(shape), shape);
  ASSERT_TRUE(mp4.ok()) << mp4.status();
  const std::vector<std::string> boxes = TopLevelBoxes(*mp4);
  const auto moov = std::find(boxes.begin(), boxes.end(), "moov");
  const auto mdat = std::find(boxes.begin(), boxes.end(), "mdat");
  ASSERT_NE(moov, boxes.end());
  ASSERT_NE(mdat, boxes.end());
  EXPECT_LT(moov, mdat);
  EXPECT_EQ(boxes.front(), "ftyp");
}

TEST(Mp4EncoderTest, SmallestVideoIsEncoded) {
  const Shape shape{1, 2, 2, 1};
  const std::string rgb = MakeVideo(shape);
  auto mp4 = Encode(rgb, shape);
  ASSERT_TRUE(mp4.ok()) << mp4.status();
  const TempFile file("tiny.mp4", *mp4);
  auto decoded = RunTool(absl::StrCat("ffmpeg -v error -i '", file.path(),
                                      "' -f rawvideo -pix_fmt rgb24 -"));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->size(), rgb.size());
}

TEST(Mp4EncoderTest, BadInputIsInvalidArgumentNamingTheField) {
  const std::vector<uint8_t> rgb(4 * 6 * 6 * 3);
  struct Case {
    RgbVideo video;
    int fps;
    const char* field;
  };
  const Case cases[] = {
      {{nullptr, 4, 6, 6}, 8, "data"},
      {{rgb.data(), 0, 6, 6}, 8, "frames"},
      {{rgb.data(), -1, 6, 6}, 8, "frames"},
      {{rgb.data(), 4, 0, 6}, 8, "height"},
      {{rgb.data(), 4, -6, 6}, 8, "height"},
      {{rgb.data(), 4, 5, 6}, 8, "height"},
      {{rgb.data(), 4, 6, 0}, 8, "width"},
      {{rgb.data(), 4, 6, 7}, 8, "width"},
      {{rgb.data(), 4, 6, 6}, 0, "fps"},
      {{rgb.data(), 4, 6, 6}, 121, "fps"},
  };
  for (const Case& c : cases) {
    auto mp4 = EncodeMp4(c.video, c.fps);
    EXPECT_EQ(mp4.status().code(), absl::StatusCode::kInvalidArgument)
        << c.field << ": " << mp4.status();
    EXPECT_THAT(mp4.status().message(), HasSubstr(c.field));
  }
  EXPECT_THAT(EncodeMp4({rgb.data(), 4, 5, 6}, 8).status().message(),
              HasSubstr("even"));
  EXPECT_THAT(EncodeMp4({rgb.data(), 4, 6, 6}, 121).status().message(),
              HasSubstr("1..120"));
}

}  // namespace
}  // namespace ditserve::video
