#include "core/config/aspect_ratio_bins.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace ditserve::config {
namespace {

using ::testing::HasSubstr;

std::vector<AspectRatioBin> Bins(int64_t sample_size) {
  absl::StatusOr<std::vector<AspectRatioBin>> bins =
      AspectRatioBinsForSampleSize(sample_size);
  EXPECT_TRUE(bins.ok()) << bins.status();
  return bins.ok() ? *bins : std::vector<AspectRatioBin>{};
}

TEST(AspectRatioBinsTest, WidescreenRequestSnapsToTheNearest1024Bin) {
  EXPECT_EQ(NearestAspectRatioBin({768, 1360}, Bins(128)),
            (ImageSize{768, 1344}));
}

TEST(AspectRatioBinsTest, TwoToOneRequestSnapsToTheHalfRatioBin) {
  EXPECT_EQ(NearestAspectRatioBin({1000, 2000}, Bins(128)),
            (ImageSize{704, 1408}));
}

TEST(AspectRatioBinsTest, SquareRequestSnapsToTheSquare512Bin) {
  EXPECT_EQ(NearestAspectRatioBin({1000, 1000}, Bins(64)),
            (ImageSize{512, 512}));
}

TEST(AspectRatioBinsTest, PortraitRequestSnapsToThe256Table) {
  EXPECT_EQ(NearestAspectRatioBin({300, 200}, Bins(32)), (ImageSize{304, 208}));
}

TEST(AspectRatioBinsTest, ExtremeRatiosClampToTheOutermostBins) {
  const std::vector<AspectRatioBin> bins = Bins(128);
  EXPECT_EQ(NearestAspectRatioBin({64, 4096}, bins), (ImageSize{512, 2048}));
  EXPECT_EQ(NearestAspectRatioBin({4096, 64}, bins), (ImageSize{2048, 512}));
}

TEST(AspectRatioBinsTest, EveryTableHasThirtyThreeBinsOnThe16PixelGrid) {
  for (int64_t sample_size : {128, 64, 32}) {
    const std::vector<AspectRatioBin> bins = Bins(sample_size);
    EXPECT_EQ(bins.size(), 33U) << sample_size;
    for (const AspectRatioBin& bin : bins) {
      EXPECT_EQ(bin.size.height % 16, 0) << sample_size << " " << bin.ratio;
      EXPECT_EQ(bin.size.width % 16, 0) << sample_size << " " << bin.ratio;
    }
  }
}

// PixArt-Sigma 2K's table has ratios the 1024-pixel one lacks.
TEST(AspectRatioBinsTest, The2048TableHasItsOwnBins) {
  const std::vector<AspectRatioBin> bins = Bins(256);
  EXPECT_EQ(bins.size(), 40U);
  for (const AspectRatioBin& bin : bins) {
    EXPECT_EQ(bin.size.height % 16, 0) << bin.ratio;
    EXPECT_EQ(bin.size.width % 16, 0) << bin.ratio;
  }
  EXPECT_EQ(NearestAspectRatioBin({1000, 3846}, bins), (ImageSize{1024, 3968}));
  EXPECT_EQ(NearestAspectRatioBin({2890, 1000}, bins), (ImageSize{3328, 1152}));
  EXPECT_EQ(NearestAspectRatioBin({1000, 1000}, bins), (ImageSize{2048, 2048}));
}

TEST(AspectRatioBinsTest, UnknownSampleSizeNamesTheSupportedOnes) {
  absl::StatusOr<std::vector<AspectRatioBin>> bins =
      AspectRatioBinsForSampleSize(48);
  EXPECT_EQ(bins.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bins.status().message(),
              HasSubstr("sample_size 48; expected 256 (2048 px), 128 (1024 "
                        "px), 64 (512 px) or 32 (256 px)"));
}

}  // namespace
}  // namespace ditserve::config
