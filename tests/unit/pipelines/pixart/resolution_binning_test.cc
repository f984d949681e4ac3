#include "core/pipelines/pixart/resolution_binning.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace ditserve::pipelines {
namespace {

using ::testing::HasSubstr;

std::vector<AspectRatioBin> Bins(int64_t sample_size) {
  absl::StatusOr<std::vector<AspectRatioBin>> bins =
      AspectRatioBinsForSampleSize(sample_size);
  EXPECT_TRUE(bins.ok()) << bins.status();
  return bins.ok() ? *bins : std::vector<AspectRatioBin>{};
}

TEST(ResolutionBinningTest, WidescreenRequestSnapsToTheNearest1024Bin) {
  EXPECT_EQ(NearestAspectRatioBin({768, 1360}, Bins(128)),
            (ImageSize{768, 1344}));
}

TEST(ResolutionBinningTest, TwoToOneRequestSnapsToTheHalfRatioBin) {
  EXPECT_EQ(NearestAspectRatioBin({1000, 2000}, Bins(128)),
            (ImageSize{704, 1408}));
}

TEST(ResolutionBinningTest, SquareRequestSnapsToTheSquare512Bin) {
  EXPECT_EQ(NearestAspectRatioBin({1000, 1000}, Bins(64)),
            (ImageSize{512, 512}));
}

TEST(ResolutionBinningTest, PortraitRequestSnapsToThe256Table) {
  EXPECT_EQ(NearestAspectRatioBin({300, 200}, Bins(32)), (ImageSize{304, 208}));
}

TEST(ResolutionBinningTest, ExtremeRatiosClampToTheOutermostBins) {
  const std::vector<AspectRatioBin> bins = Bins(128);
  EXPECT_EQ(NearestAspectRatioBin({64, 4096}, bins), (ImageSize{512, 2048}));
  EXPECT_EQ(NearestAspectRatioBin({4096, 64}, bins), (ImageSize{2048, 512}));
}

TEST(ResolutionBinningTest, EveryTableHasThirtyThreeBinsOnThe16PixelGrid) {
  for (int64_t sample_size : {128, 64, 32}) {
    const std::vector<AspectRatioBin> bins = Bins(sample_size);
    EXPECT_EQ(bins.size(), 33U) << sample_size;
    for (const AspectRatioBin& bin : bins) {
      EXPECT_EQ(bin.size.height % 16, 0) << sample_size << " " << bin.ratio;
      EXPECT_EQ(bin.size.width % 16, 0) << sample_size << " " << bin.ratio;
    }
  }
}

TEST(ResolutionBinningTest, UnknownSampleSizeNamesTheSupportedOnes) {
  absl::StatusOr<std::vector<AspectRatioBin>> bins =
      AspectRatioBinsForSampleSize(48);
  EXPECT_EQ(bins.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bins.status().message(),
              HasSubstr("sample_size 48; expected 128 (1024 px), 64 (512 px) "
                        "or 32 (256 px)"));
}

TEST(ResolutionBinningTest, ImageOfTheTargetSizeIsReturnedUnchanged) {
  const at::Tensor images = torch::rand({2, 3, 16, 24});
  EXPECT_TRUE(ResizeAndCenterCrop(images, {16, 24}).equal(images));
}

TEST(ResolutionBinningTest, ResizeCoversTheTargetThenCropsTheCentre) {
  // 768x1344 -> 768x1360: scaled by 1360/1344 to 777x1360, 4 rows cropped
  // off the top and 5 off the bottom.
  const at::Tensor rows = torch::arange(768, torch::kFloat)
                              .view({1, 1, 768, 1})
                              .expand({1, 3, 768, 1344});
  const at::Tensor out = ResizeAndCenterCrop(rows, {768, 1360});
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{1, 3, 768, 1360}));
  const at::Tensor resized = torch::nn::functional::interpolate(
      rows, torch::nn::functional::InterpolateFuncOptions()
                .size(std::vector<int64_t>{777, 1360})
                .mode(torch::kBilinear)
                .align_corners(false));
  EXPECT_TRUE(out.equal(resized.slice(2, 4, 772)));
}

TEST(ResolutionBinningTest, ConstantImageStaysConstantWhenShrunk) {
  const at::Tensor images = torch::full({1, 3, 1408, 704}, 0.25);
  const at::Tensor out = ResizeAndCenterCrop(images, {1000, 500});
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{1, 3, 1000, 500}));
  EXPECT_TRUE(torch::allclose(out, torch::full_like(out, 0.25)));
}

}  // namespace
}  // namespace ditserve::pipelines
