#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/base/json.h"
#include "core/families/cogvideox/cogvideox_vae_config.h"
#include "core/families/cogvideox/cogvideox_vae_decoder.h"
#include "core/families/cogvideox/cogvideox_vae_frame_batches.h"
#include "nlohmann/json.hpp"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::InDType;
using ::testing::HasSubstr;

constexpr char kCase[] = "models/vae_cogvideox";

std::string CaseDir() {
  return std::string(DITSERVE_TEST_DATA_DIR) + "/golden/" + kCase;
}

std::shared_ptr<AutoencoderKLCogVideoX> LoadGoldenVae() {
  absl::StatusOr<std::shared_ptr<AutoencoderKLCogVideoX>> vae =
      LoadAutoencoderKLCogVideoX(CaseDir(), models::Placement{});
  EXPECT_TRUE(vae.ok()) << vae.status();
  return vae.ok() ? *vae : nullptr;
}

double MaxAbsDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(CogVideoXVaeGoldenTest, ChunkedDecodeMatchesDiffusers) {
  const GoldenCase golden(kCase);
  std::shared_ptr<AutoencoderKLCogVideoX> vae = LoadGoldenVae();
  ASSERT_NE(vae, nullptr);
  for (const auto& [input, output] :
       {std::pair<std::string, std::string>{"z", "sample"},
        {"z_even", "sample_even"}}) {
    absl::StatusOr<at::Tensor> sample = vae->Decode(golden.Input(input));
    ASSERT_TRUE(sample.ok()) << sample.status();
    EXPECT_TRUE(
        AllClose(*sample, golden.Output(output), golden.ToleranceFor(output)))
        << output;
  }
}

// 11x9 latents in tiles of 6x5 stepping 5x4 (enable_tiling's 48x40-pixel
// tiles; the tiny VAE's own would not tile, see CogVideoXVaeTiles' test),
// each decoded over both frame chunks of 5 latent frames.
TEST(CogVideoXVaeGoldenTest, TiledDecodeMatchesDiffusers) {
  const GoldenCase tiled("vae_tiling/vae_cogvideox");
  std::shared_ptr<AutoencoderKLCogVideoX> vae = LoadGoldenVae();
  ASSERT_NE(vae, nullptr);
  const nlohmann::json& sizes = tiled.json().at("enable_tiling");
  absl::StatusOr<models::DecodeTiles> tiles = CogVideoXVaeTilesOfSize(
      vae->config(), sizes.at("tile_sample_min_height").get<int64_t>(),
      sizes.at("tile_sample_min_width").get<int64_t>());
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  absl::StatusOr<at::Tensor> sample =
      vae->DecodeTiled(tiled.Input("z"), *tiles);
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(
      AllClose(*sample, tiled.Output("sample"), tiled.ToleranceFor("sample")));
}

TEST(CogVideoXVaeTest, TilesAreHalfTheSampleSize) {
  CogVideoXVaeConfig config;
  config.block_out_channels = {8, 8, 16, 16};
  absl::StatusOr<models::DecodeTiles> released = CogVideoXVaeTiles(config);
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(released->latent_height, 30);
  EXPECT_EQ(released->latent_width, 45);
  config.sample_height = 32;
  config.sample_width = 32;
  EXPECT_THAT(CogVideoXVaeTiles(config).status().message(),
              HasSubstr("would not have the latents' size"));
}

TEST(CogVideoXVaeGoldenTest, DecodeInBfloat16IsWithinTheDerivedTolerance) {
  const GoldenCase golden(kCase);
  absl::StatusOr<std::shared_ptr<AutoencoderKLCogVideoX>> vae =
      LoadAutoencoderKLCogVideoX(CaseDir(),
                                 models::Placement{.dtype = at::kBFloat16});
  ASSERT_TRUE(vae.ok()) << vae.status();
  torch::NoGradGuard no_grad;
  for (const auto& [input, output] :
       {std::pair<std::string, std::string>{"z", "sample"},
        {"z_even", "sample_even"}}) {
    absl::StatusOr<at::Tensor> sample =
        (*vae)->Decode(InDType(golden.Input(input), at::kBFloat16));
    ASSERT_TRUE(sample.ok()) << sample.status();
    golden.ExpectBfloat16Close(*sample, output);
  }
  absl::StatusOr<at::Tensor> single_pass =
      (*vae)->DecodeSinglePass(InDType(golden.Input("z"), at::kBFloat16));
  ASSERT_TRUE(single_pass.ok()) << single_pass.status();
  golden.ExpectBfloat16Close(*single_pass, "sample_single_pass");
}

TEST(CogVideoXVaeGoldenTest, SinglePassMatchesTheDecoderCall) {
  const GoldenCase golden(kCase);
  std::shared_ptr<AutoencoderKLCogVideoX> vae = LoadGoldenVae();
  ASSERT_NE(vae, nullptr);
  absl::StatusOr<at::Tensor> sample = vae->DecodeSinglePass(golden.Input("z"));
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample_single_pass"),
                       golden.ToleranceFor("sample_single_pass")));
}

TEST(CogVideoXVaeFrameBatchesTest, MatchesTheCaseChunks) {
  const GoldenCase golden(kCase);
  for (const char* input : {"z", "z_even"}) {
    const nlohmann::json& expected =
        golden.json()["decode_frame_batches"][input];
    const std::vector<FrameRange> batches =
        DecodeFrameBatches(golden.Input(input).size(2));
    ASSERT_EQ(batches.size(), expected.size()) << input;
    for (size_t i = 0; i < batches.size(); ++i) {
      EXPECT_EQ(batches[i].begin, expected[i][0].get<int64_t>()) << input;
      EXPECT_EQ(batches[i].end, expected[i][1].get<int64_t>()) << input;
    }
  }
}

TEST(CogVideoXVaeFrameBatchesTest, OddCountsPutTheExtraFrameFirst) {
  const std::vector<FrameRange> thirteen = DecodeFrameBatches(13);
  ASSERT_EQ(thirteen.size(), 6);
  EXPECT_EQ(thirteen[0].begin, 0);
  EXPECT_EQ(thirteen[0].end, 3);
  EXPECT_EQ(thirteen[1].begin, 3);
  EXPECT_EQ(thirteen[5].end, 13);
  const std::vector<FrameRange> one = DecodeFrameBatches(1);
  ASSERT_EQ(one.size(), 1);
  EXPECT_EQ(one[0].end, 1);
}

// Two doublings (temporal compression 4): a pass of 2 latent frames makes 8
// frames, the first pass of an odd count (3 latent frames) 9.
TEST(CogVideoXVaeFrameBatchesTest, MostFramesPerPassAreThoseOfTheLargestPass) {
  EXPECT_EQ(MostFramesPerDecoderPass(1, 2), 1);
  EXPECT_EQ(MostFramesPerDecoderPass(2, 2), 8);
  EXPECT_EQ(MostFramesPerDecoderPass(4, 2), 8);
  EXPECT_EQ(MostFramesPerDecoderPass(13, 2), 9);
}

TEST(CogVideoXVaeTest, OutputFramesAreFourPerLatentFrameButOneForTheFirstOdd) {
  std::shared_ptr<AutoencoderKLCogVideoX> vae = LoadGoldenVae();
  ASSERT_NE(vae, nullptr);
  torch::manual_seed(0);
  for (int64_t latent_frames = 1; latent_frames <= 7; ++latent_frames) {
    absl::StatusOr<at::Tensor> video =
        vae->Decode(torch::randn({1, 16, latent_frames, 2, 3}));
    ASSERT_TRUE(video.ok()) << video.status();
    const int64_t expected = latent_frames % 2 == 1
                                 ? 4 * (latent_frames - 1) + 1
                                 : 4 * latent_frames;
    EXPECT_EQ(video->sizes().vec(),
              (std::vector<int64_t>{1, 3, expected, 16, 24}))
        << latent_frames << " latent frames";
  }
}

// The second chunk's causal convs are padded with the first chunk's cached
// frames, not with copies of their own first frame.
TEST(CogVideoXVaeTest, LaterChunksContinueFromTheConvCaches) {
  const GoldenCase golden(kCase);
  std::shared_ptr<AutoencoderKLCogVideoX> vae = LoadGoldenVae();
  ASSERT_NE(vae, nullptr);
  const at::Tensor z = golden.Input("z");
  absl::StatusOr<at::Tensor> chunked = vae->Decode(z);
  absl::StatusOr<at::Tensor> first = vae->DecodeSinglePass(z.slice(2, 0, 3));
  absl::StatusOr<at::Tensor> second_alone =
      vae->DecodeSinglePass(z.slice(2, 3, 5));
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second_alone.ok()) << second_alone.status();
  EXPECT_TRUE(torch::equal(chunked->slice(2, 0, 9), *first));
  EXPECT_GT(MaxAbsDiff(chunked->slice(2, 9), *second_alone), 1e-2);

  // The cache carries information forward only: changing the last latent
  // frame of the first chunk changes the second chunk's frames; changing
  // the second chunk leaves the first chunk's frames alone.
  at::Tensor z_changed_first = z.clone();
  z_changed_first.select(2, 2).add_(1.0);
  at::Tensor z_changed_second = z.clone();
  z_changed_second.select(2, 3).add_(1.0);
  absl::StatusOr<at::Tensor> from_first = vae->Decode(z_changed_first);
  absl::StatusOr<at::Tensor> from_second = vae->Decode(z_changed_second);
  ASSERT_TRUE(from_first.ok()) << from_first.status();
  ASSERT_TRUE(from_second.ok()) << from_second.status();
  EXPECT_GT(MaxAbsDiff(from_first->slice(2, 9), chunked->slice(2, 9)), 1e-3);
  EXPECT_TRUE(
      torch::equal(from_second->slice(2, 0, 9), chunked->slice(2, 0, 9)));
}

TEST(CogVideoXVaeTest, WrongLatentShapeNamesTheExpectedShape) {
  std::shared_ptr<AutoencoderKLCogVideoX> vae = LoadGoldenVae();
  ASSERT_NE(vae, nullptr);
  absl::StatusOr<at::Tensor> channels_last =
      vae->Decode(torch::zeros({1, 5, 16, 4, 4}));
  EXPECT_EQ(channels_last.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      channels_last.status().message(),
      HasSubstr("z has shape [1, 5, 16, 4, 4]; expected [*, 16, *, *, *]"));
  absl::StatusOr<at::Tensor> image = vae->Decode(torch::zeros({1, 16, 4, 4}));
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(image.status().message(), HasSubstr("expected [*, 16, *, *, *]"));
  absl::StatusOr<at::Tensor> no_frames =
      vae->DecodeSinglePass(torch::zeros({1, 16, 0, 4, 4}));
  EXPECT_EQ(no_frames.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CogVideoXVaeTest, HoldsOnlyTheDecoder) {
  std::shared_ptr<AutoencoderKLCogVideoX> vae = LoadGoldenVae();
  ASSERT_NE(vae, nullptr);
  EXPECT_TRUE(vae->HoldsTensor("decoder.conv_in.conv.weight"));
  EXPECT_FALSE(vae->HoldsTensor("encoder.conv_in.conv.weight"));
}

class CogVideoXVaeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<nlohmann::json> json =
        base::ReadJsonObjectFile(CaseDir() + "/config.json");
    ASSERT_TRUE(json.ok()) << json.status();
    json_ = *json;
  }

  absl::Status Parse() const {
    return ParseCogVideoXVaeConfig(json_, "vae/config.json").status();
  }

  nlohmann::json json_;
};

TEST_F(CogVideoXVaeConfigTest, ReadsTheCaseConfig) {
  absl::StatusOr<CogVideoXVaeConfig> config =
      ParseCogVideoXVaeConfig(json_, "vae/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->latent_channels, 16);
  EXPECT_EQ(config->block_out_channels, (std::vector<int64_t>{8, 8, 16, 16}));
  EXPECT_DOUBLE_EQ(config->scaling_factor, 0.7);
  EXPECT_EQ(config->shift_factor, std::nullopt);
  EXPECT_EQ(config->scale_factor(), 8);
  EXPECT_EQ(config->temporal_upsampling_blocks(), 2);
  EXPECT_EQ(config->sample_height, 32);
  EXPECT_EQ(config->sample_width, 32);
  json_.erase("sample_height");
  json_.erase("sample_width");
  absl::StatusOr<CogVideoXVaeConfig> defaulted =
      ParseCogVideoXVaeConfig(json_, "vae/config.json");
  ASSERT_TRUE(defaulted.ok()) << defaulted.status();
  EXPECT_EQ(defaulted->sample_height, 480);
  EXPECT_EQ(defaulted->sample_width, 720);
}

TEST_F(CogVideoXVaeConfigTest, MissingKeyIsNamed) {
  json_.erase("latent_channels");
  EXPECT_THAT(Parse().message(),
              HasSubstr("vae/config.json: field \"latent_channels\" is "
                        "missing or null"));
}

TEST_F(CogVideoXVaeConfigTest, WrongTypeIsNamedWithItsValue) {
  json_["norm_num_groups"] = "4";
  EXPECT_THAT(Parse().message(),
              HasSubstr("vae/config.json: field \"norm_num_groups\" is \"4\"; "
                        "expected a positive integer"));
}

TEST_F(CogVideoXVaeConfigTest, UnsupportedValuesAreNamed) {
  json_["up_block_types"][2] = "UpDecoderBlock2D";
  EXPECT_THAT(Parse().message(),
              HasSubstr("up block type \"UpDecoderBlock2D\" is not supported"));
  SetUp();
  json_["temporal_compression_ratio"] = 3;
  EXPECT_THAT(Parse().message(),
              HasSubstr("vae/config.json: temporal_compression_ratio 3"));
  SetUp();
  json_["temporal_compression_ratio"] = 16;
  EXPECT_THAT(Parse().message(), HasSubstr("temporal_compression_ratio 16"));
  SetUp();
  json_["use_post_quant_conv"] = true;
  EXPECT_THAT(Parse().message(),
              HasSubstr("vae/config.json: field \"use_post_quant_conv\""));
  SetUp();
  json_["block_out_channels"] = {8, 8, 16, 18};
  EXPECT_THAT(Parse().message(),
              HasSubstr("block_out_channels entry 18 is not divisible by "
                        "norm_num_groups 4"));
}

}  // namespace
}  // namespace ditserve::families
