// GenerateRequest.vae_tiling as a client meets it: an output wider than one
// VAE tile comes back decoded in blended tiles, the same bytes as the
// family decoding the request's served latents in tiles here, and not those
// of a whole decode.

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/family_registry.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/families/family.h"
#include "core/families/flux/flux_defaults.h"
#include "core/parallel/local_attention.h"
#include "gtest/gtest.h"
#include "tests/integration/serving/tiny_model_cluster.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::LatentFloats;
using ::ditserve::local_cluster::SmallRequest;

constexpr double kCallSeconds = 120;

struct WideOutput {
  const config::ModelDefaults* model;
  int width;
  int height;
  int frames;
  // ServerInfo's tile for the tiny checkpoint's VAE config.
  int tile_height;
  int tile_width;
};

// FLUX: 1088 pixels wide, a 1024-pixel tile (sample_size 1024) and one of
// 320 blended over 256. CogVideoX-5b: 368 wide, a 360-pixel tile (half of
// sample_width 720) and one of 80 blended over 72, each over 9 frames.
const WideOutput kCases[] = {
    {&families::kFluxDevDefaults, 1088, 64, 1, 1024, 1024},
    {&families::kCogVideoX5bDefaults, 368, 64, 9, 240, 360},
};

class VaeTilingServingTest : public ::testing::TestWithParam<WideOutput> {};

v1::GenerateRequest WideRequest(const WideOutput& wide, v1::OutputFormat format,
                                bool vae_tiling) {
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.set_width(wide.width);
  request.set_height(wide.height);
  if (wide.frames > 1) request.set_num_frames(wide.frames);
  request.set_num_inference_steps(1);
  request.set_output_format(format);
  if (vae_tiling) request.set_vae_tiling(true);
  return request;
}

// The served RGB8 bytes of `response`'s one output as [frames, H, W, 3].
at::Tensor ServedRgb(const v1::GenerateResponse& response,
                     const WideOutput& wide) {
  EXPECT_EQ(response.images_size(), 1);
  const std::string& bytes = response.images(0).data();
  at::Tensor rgb =
      torch::empty({wide.frames, wide.height, wide.width, 3}, torch::kUInt8);
  EXPECT_EQ(bytes.size(), static_cast<size_t>(rgb.numel()));
  std::memcpy(rgb.data_ptr(), bytes.data(),
              std::min(bytes.size(), static_cast<size_t>(rgb.numel())));
  return rgb;
}

// Values of `actual` more than one step from `expected` (CPU kernels on
// another thread count may round a pixel to the neighbouring byte).
int64_t PixelsApart(const at::Tensor& actual, const at::Tensor& expected) {
  return (actual.to(torch::kInt) - expected.to(torch::kInt))
      .abs()
      .gt(1)
      .sum()
      .item<int64_t>();
}

TEST_P(VaeTilingServingTest, WideOutputIsDecodedInBlendedTiles) {
  const WideOutput& wide = GetParam();
  const std::string model_dir = TinyCheckpoint(*wide.model);
  std::unique_ptr<local_cluster::ServingCluster> cluster =
      StartCluster(model_dir, 1, {});
  ASSERT_NE(cluster, nullptr);

  v1::ServerInfo info;
  grpc::Status info_status = cluster->generation().GetServerInfo(
      ContextWithDeadline(kCallSeconds).get(), v1::GetServerInfoRequest(),
      &info);
  ASSERT_TRUE(info_status.ok()) << info_status.error_message();
  EXPECT_EQ(info.vae_tile_height(), wide.tile_height);
  EXPECT_EQ(info.vae_tile_width(), wide.tile_width);

  absl::StatusOr<v1::GenerateResponse> latents = cluster->Generate(
      WideRequest(wide, v1::OUTPUT_FORMAT_LATENT_F32, false), kCallSeconds);
  absl::StatusOr<v1::GenerateResponse> tiled = cluster->Generate(
      WideRequest(wide, v1::OUTPUT_FORMAT_RGB8, true), kCallSeconds);
  absl::StatusOr<v1::GenerateResponse> whole = cluster->Generate(
      WideRequest(wide, v1::OUTPUT_FORMAT_RGB8, false), kCallSeconds);
  ASSERT_TRUE(latents.ok()) << latents.status();
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(tiled->config().vae_tiling());

  absl::StatusOr<const families::Family*> family =
      engine::FamilyFor(wide.model->name);
  ASSERT_TRUE(family.ok()) << family.status();
  families::LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  options.prompt_encoders = false;
  absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
      (*family)->Load(model_dir, options);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<float> values = LatentFloats(latents->images(0));
  std::vector<int64_t> shape = {1};
  for (int side : latents->config().shapes().image_latent_shape()) {
    shape.push_back(side);
  }
  const at::Tensor served_latents =
      torch::from_blob(values.data(), shape).clone();
  torch::NoGradGuard no_grad;
  families::DecodeRequest decode{.height = wide.height,
                                 .width = wide.width,
                                 .frames = wide.frames,
                                 .vae_tiling = true};
  absl::StatusOr<families::DecodeOutput> in_tiles =
      (*model)->Decode(served_latents, decode);
  decode.vae_tiling = false;
  absl::StatusOr<families::DecodeOutput> in_one =
      (*model)->Decode(served_latents, decode);
  ASSERT_TRUE(in_tiles.ok()) << in_tiles.status();
  ASSERT_TRUE(in_one.ok()) << in_one.status();
  const auto frames = [&](const at::Tensor& rgb) {
    return rgb.reshape({wide.frames, wide.height, wide.width, 3});
  };

  EXPECT_EQ(PixelsApart(ServedRgb(*tiled, wide), frames(in_tiles->images.rgb)),
            0);
  EXPECT_EQ(PixelsApart(ServedRgb(*whole, wide), frames(in_one->images.rgb)),
            0);
  // The tiles' own norms (and FLUX's mid-block attention) give other pixels
  // throughout.
  EXPECT_GT(PixelsApart(ServedRgb(*tiled, wide), ServedRgb(*whole, wide)),
            wide.width);
}

INSTANTIATE_TEST_SUITE_P(Families, VaeTilingServingTest,
                         ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<WideOutput>& info) {
                           std::string name(info.param.model->name);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace ditserve::testing
