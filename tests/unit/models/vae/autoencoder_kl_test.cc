#include "core/models/vae/autoencoder_kl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "core/base/json.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::models {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::InDType;
using ::testing::HasSubstr;

class AutoencoderKLGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AutoencoderKLGoldenTest, DecodeMatchesDiffusers) {
  const GoldenCase golden("models/" + GetParam());
  absl::StatusOr<std::shared_ptr<AutoencoderKL>> vae =
      LoadAutoencoderKL(golden.dir(), Placement{});
  ASSERT_TRUE(vae.ok()) << vae.status();
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = (*vae)->Decode(golden.Input("z"));
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

TEST_P(AutoencoderKLGoldenTest, DecodeInBfloat16IsWithinTheDerivedTolerance) {
  const GoldenCase golden("models/" + GetParam());
  absl::StatusOr<std::shared_ptr<AutoencoderKL>> vae =
      LoadAutoencoderKL(golden.dir(), Placement{.dtype = at::kBFloat16});
  ASSERT_TRUE(vae.ok()) << vae.status();
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample =
      (*vae)->Decode(InDType(golden.Input("z"), at::kBFloat16));
  ASSERT_TRUE(sample.ok()) << sample.status();
  golden.ExpectBfloat16Close(*sample, "sample");
}

// vae_sd has post_quant_conv and 4 latent channels; vae_flux and vae_sd3
// have neither quant conv and 16 channels with different scale/shift.
INSTANTIATE_TEST_SUITE_P(GoldenCases, AutoencoderKLGoldenTest,
                         ::testing::Values("vae_flux", "vae_sd", "vae_sd3"));

TEST(AutoencoderKLTest, ReadsScaleAndShiftFromConfig) {
  absl::StatusOr<AutoencoderKLConfig> flux =
      ReadAutoencoderKLConfig(std::string(DITSERVE_TEST_DATA_DIR) +
                              "/golden/models/vae_flux/config.json");
  ASSERT_TRUE(flux.ok()) << flux.status();
  EXPECT_DOUBLE_EQ(flux->scaling_factor, 0.3611);
  EXPECT_EQ(flux->shift_factor, 0.1159);
  EXPECT_FALSE(flux->use_post_quant_conv);
  EXPECT_EQ(flux->scale_factor(), 4);
  absl::StatusOr<AutoencoderKLConfig> sd =
      ReadAutoencoderKLConfig(std::string(DITSERVE_TEST_DATA_DIR) +
                              "/golden/models/vae_sd/config.json");
  ASSERT_TRUE(sd.ok()) << sd.status();
  EXPECT_EQ(sd->shift_factor, std::nullopt);
  EXPECT_TRUE(sd->use_post_quant_conv);
}

TEST(AutoencoderKLTest, PostQuantConvIsBuiltOnlyWhenConfigured) {
  absl::StatusOr<AutoencoderKLConfig> config =
      ReadAutoencoderKLConfig(std::string(DITSERVE_TEST_DATA_DIR) +
                              "/golden/models/vae_sd/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(AutoencoderKL(*config).named_parameters().contains(
      "post_quant_conv.weight"));
  config->use_post_quant_conv = false;
  const AutoencoderKL without(*config);
  EXPECT_FALSE(without.named_parameters().contains("post_quant_conv.weight"));
  EXPECT_FALSE(without.HoldsTensor("post_quant_conv.weight"));
  EXPECT_FALSE(without.HoldsTensor("encoder.conv_in.weight"));
  EXPECT_TRUE(without.HoldsTensor("decoder.conv_in.weight"));
}

TEST(AutoencoderKLTest, WrongLatentChannelsNamesTheShapes) {
  absl::StatusOr<std::shared_ptr<AutoencoderKL>> vae = LoadAutoencoderKL(
      std::string(DITSERVE_TEST_DATA_DIR) + "/golden/models/vae_flux",
      Placement{});
  ASSERT_TRUE(vae.ok()) << vae.status();
  absl::StatusOr<at::Tensor> sample =
      (*vae)->Decode(torch::zeros({1, 4, 8, 8}));
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("z has shape [1, 4, 8, 8]; expected [*, 16, *, *]"));
}

TEST(AutoencoderKLTest, UnsupportedUpBlockTypeIsAnError) {
  absl::StatusOr<nlohmann::json> json =
      base::ReadJsonObjectFile(std::string(DITSERVE_TEST_DATA_DIR) +
                               "/golden/models/vae_flux/config.json");
  ASSERT_TRUE(json.ok()) << json.status();
  (*json)["up_block_types"][1] = "AttnUpDecoderBlock2D";
  absl::StatusOr<AutoencoderKLConfig> config =
      ParseAutoencoderKLConfig(*json, "vae/config.json");
  EXPECT_THAT(config.status().message(),
              HasSubstr("up block type \"AttnUpDecoderBlock2D\" is not "
                        "supported"));
}

}  // namespace
}  // namespace ditserve::models
