#include "core/families/flux/flux_latents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace ditserve::families {
namespace {

using ::testing::HasSubstr;

TEST(FluxLatentsTest, PackPutsEach2x2PatchIntoOneToken) {
  // One channel, 2x4 latent: two patches side by side.
  const at::Tensor latents =
      torch::arange(8, torch::kFloat).reshape({1, 1, 2, 4});
  const at::Tensor packed = PackLatents(latents);
  ASSERT_EQ(packed.sizes(), (at::IntArrayRef{1, 2, 4}));
  EXPECT_TRUE(
      torch::equal(packed[0][0], torch::tensor({0.0F, 1.0F, 4.0F, 5.0F})));
  EXPECT_TRUE(
      torch::equal(packed[0][1], torch::tensor({2.0F, 3.0F, 6.0F, 7.0F})));
}

TEST(FluxLatentsTest, UnpackInvertsPack) {
  const at::Tensor latents = torch::randn({2, 16, 6, 8});
  EXPECT_TRUE(torch::equal(
      UnpackLatents(PackLatents(latents), FluxLatentGrid{6, 8}), latents));
}

TEST(FluxLatentsTest, ImageIdsHoldRowAndColumnOfEachToken) {
  const at::Tensor ids = LatentImageIds(FluxLatentGrid{4, 6}, torch::kFloat);
  ASSERT_EQ(ids.sizes(), (at::IntArrayRef{6, 3}));
  EXPECT_TRUE(torch::equal(ids[4], torch::tensor({0.0F, 1.0F, 1.0F})));
  EXPECT_TRUE(torch::equal(ids.select(1, 0), torch::zeros({6})));
}

TEST(FluxLatentsTest, GridNeedsMultiplesOfTwiceTheVaeScale) {
  absl::StatusOr<FluxLatentGrid> grid = LatentGridFor(1024, 768, 8);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->height, 128);
  EXPECT_EQ(grid->tokens(), 64 * 48);
  EXPECT_THAT(LatentGridFor(1024, 1000, 8).status().message(),
              HasSubstr("width 1000 is not a positive multiple of 16"));
}

}  // namespace
}  // namespace ditserve::families
