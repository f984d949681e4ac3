#include "core/models/vae/tiled_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/models/vae/autoencoder_kl.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::models {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::testing::HasSubstr;

std::shared_ptr<AutoencoderKL> LoadVae(const GoldenCase& tiled) {
  absl::StatusOr<std::shared_ptr<AutoencoderKL>> vae = LoadAutoencoderKL(
      tiled.dir() + "/" + tiled.json().at("weights_dir").get<std::string>(),
      Placement{});
  EXPECT_TRUE(vae.ok()) << vae.status();
  return vae.ok() ? *vae : nullptr;
}

class AutoencoderKLTilingTest : public ::testing::TestWithParam<std::string> {};

// Latents of 14x20 in tiles of 8 stepping 6: three rows and four columns,
// the last of each 2 latent pixels wide.
TEST_P(AutoencoderKLTilingTest, TiledDecodeMatchesDiffusers) {
  const GoldenCase tiled("vae_tiling/" + GetParam());
  std::shared_ptr<AutoencoderKL> vae = LoadVae(tiled);
  ASSERT_NE(vae, nullptr);
  absl::StatusOr<DecodeTiles> tiles = AutoencoderKLTiles(vae->config());
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample =
      vae->DecodeTiled(tiled.Input("z"), *tiles);
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(
      AllClose(*sample, tiled.Output("sample"), tiled.ToleranceFor("sample")));
}

// diffusers tiles only latents larger than a tile (8x8 here): one tile's
// latents decode whole, one latent pixel more already in tiles.
TEST_P(AutoencoderKLTilingTest, OnlyLatentsLargerThanATileAreTiled) {
  const GoldenCase tiled("vae_tiling/" + GetParam());
  std::shared_ptr<AutoencoderKL> vae = LoadVae(tiled);
  ASSERT_NE(vae, nullptr);
  absl::StatusOr<DecodeTiles> tiles = AutoencoderKLTiles(vae->config());
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  torch::NoGradGuard no_grad;
  for (const int64_t width : {8, 9}) {
    const at::Tensor z = tiled.Input("z").narrow(2, 0, 8).narrow(3, 0, width);
    EXPECT_EQ(NeedsTiles(*tiles, z), width > 8);
    absl::StatusOr<at::Tensor> whole = vae->Decode(z);
    absl::StatusOr<at::Tensor> tiled_sample = vae->DecodeTiled(z);
    ASSERT_TRUE(whole.ok() && tiled_sample.ok());
    ASSERT_EQ(whole->sizes(), tiled_sample->sizes()) << width;
    EXPECT_EQ(at::equal(*whole, *tiled_sample), width == 8) << width;
  }
}

// vae_sd has post_quant_conv, which runs per tile.
INSTANTIATE_TEST_SUITE_P(Cases, AutoencoderKLTilingTest,
                         ::testing::Values("vae_flux", "vae_sd"));

std::vector<int64_t> Fields(const DecodeTiles& tiles) {
  return {tiles.latent_height, tiles.latent_width, tiles.step_height,
          tiles.step_width,    tiles.blend_height, tiles.blend_width,
          tiles.kept_height,   tiles.kept_width};
}

TEST(TilesForSampleTest, GivesDiffusersGeometryForTheReleasedVaes) {
  struct Released {
    const char* vae;
    int64_t sample_height;
    int64_t sample_width;
    double overlap_height;
    double overlap_width;
    DecodeTiles expected;
  };
  for (const Released& released : {
           Released{"FLUX.1 and SD3: sample_size 1024, a quarter's overlap",
                    1024, 1024, 0.25, 0.25,
                    DecodeTiles{128, 128, 96, 96, 256, 256, 768, 768}},
           Released{"CogVideoX-2b/5b: half of 480x720, a sixth and a fifth",
                    240, 360, 1.0 / 6, 1.0 / 5,
                    DecodeTiles{30, 45, 25, 36, 40, 72, 200, 288}},
           Released{"CogVideoX1.5: half of 768x1360", 384, 680, 1.0 / 6,
                    1.0 / 5, DecodeTiles{48, 85, 40, 68, 64, 136, 320, 544}},
       }) {
    absl::StatusOr<DecodeTiles> tiles =
        TilesForSample(released.sample_height, released.sample_width,
                       released.overlap_height, released.overlap_width, 8);
    ASSERT_TRUE(tiles.ok()) << released.vae << ": " << tiles.status();
    EXPECT_EQ(Fields(*tiles), Fields(released.expected)) << released.vae;
  }
}

TEST(TilesForSampleTest, RefusesStepsThatDoNotCoverTheKeptPixels) {
  // The tiny golden CogVideoX VAE's own tiles: 2 latent pixels step 1 (8
  // pixels) but each keeps 14 and 13.
  absl::StatusOr<DecodeTiles> tiles =
      TilesForSample(16, 16, 1.0 / 6, 1.0 / 5, 8);
  ASSERT_FALSE(tiles.ok());
  EXPECT_EQ(tiles.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tiles.status().message(),
              HasSubstr("step 1x1 latent pixels (8x8 pixels) but keep 14x13"));
}

TEST(DecodeInTilesTest, BlendsEachSeamLinearlyFromTheEarlierTile) {
  // A "decoder" that repeats each latent pixel 2x2 and paints each tile
  // with its own number: the seams show the blend's weights.
  const DecodeTiles tiles{.latent_height = 2,
                          .latent_width = 2,
                          .step_height = 1,
                          .step_width = 1,
                          .blend_height = 2,
                          .blend_width = 2,
                          .kept_height = 2,
                          .kept_width = 2};
  int painted = 0;
  const at::Tensor decoded = DecodeInTiles(
      torch::zeros({1, 1, 1, 2}), tiles, [&](const at::Tensor& tile) {
        return torch::full({1, 1, tile.size(2) * 2, tile.size(3) * 2},
                           static_cast<float>(++painted));
      });
  // Two tiles side by side: the second one's first two columns go from the
  // first tile's value (weight 1, then 1/2) to its own.
  ASSERT_EQ(decoded.sizes(), (at::IntArrayRef{1, 1, 2, 4}));
  EXPECT_TRUE(
      at::equal(decoded[0][0][0], torch::tensor({1.0F, 1.0F, 1.0F, 1.5F})));
}

}  // namespace
}  // namespace ditserve::models
