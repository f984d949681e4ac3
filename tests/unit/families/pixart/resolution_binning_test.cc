#include "core/families/pixart/resolution_binning.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace ditserve::families {
namespace {

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

// Binning takes any requested size (Freeze), odd ones included, and ones
// whose scaled side truncates below the target: 1600 × (58 / 1600) is
// 57.99... in doubles.
TEST(ResolutionBinningTest, EveryTargetSizeIsMet) {
  EXPECT_EQ(
      ResizeAndCenterCrop(torch::rand({2, 3, 1280, 768}), {1000, 601}).sizes(),
      (std::vector<int64_t>{2, 3, 1000, 601}));
  EXPECT_EQ(
      ResizeAndCenterCrop(torch::rand({1, 3, 640, 1600}), {22, 58}).sizes(),
      (std::vector<int64_t>{1, 3, 22, 58}));
}

}  // namespace
}  // namespace ditserve::families
