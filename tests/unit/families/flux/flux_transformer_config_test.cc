#include "core/families/flux/flux_transformer_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

using ::testing::HasSubstr;

nlohmann::json DevConfig() {
  return nlohmann::json::parse(R"({
    "_class_name": "FluxTransformer2DModel", "attention_head_dim": 16,
    "axes_dims_rope": [4, 6, 6], "guidance_embeds": true, "in_channels": 64,
    "joint_attention_dim": 32, "num_attention_heads": 2, "num_layers": 1,
    "num_single_layers": 2, "out_channels": null, "patch_size": 1,
    "pooled_projection_dim": 32})");
}

TEST(FluxTransformerConfigTest, NullOutChannelsMeansInChannels) {
  absl::StatusOr<FluxTransformerConfig> config =
      ParseFluxTransformerConfig(DevConfig(), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->out_channels, 64);
  EXPECT_EQ(config->inner_dim(), 32);
  EXPECT_EQ(config->total_blocks(), 3);
  EXPECT_TRUE(config->guidance_embeds);
}

TEST(FluxTransformerConfigTest, RopeAxesMustSumToHeadDim) {
  nlohmann::json json = DevConfig();
  json["axes_dims_rope"] = {4, 6, 8};
  absl::StatusOr<FluxTransformerConfig> config =
      ParseFluxTransformerConfig(json, "transformer/config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("transformer/config.json: axes_dims_rope [4, 6, 8] "
                        "must be even and sum to attention_head_dim 16"));
}

TEST(FluxTransformerConfigTest, MissingFieldIsNamed) {
  nlohmann::json json = DevConfig();
  json.erase("num_attention_heads");
  absl::StatusOr<FluxTransformerConfig> config =
      ParseFluxTransformerConfig(json, "config.json");
  EXPECT_THAT(config.status().message(),
              HasSubstr("\"num_attention_heads\" is missing"));
}

TEST(FluxTransformerConfigTest, NonPositiveSizeIsRejectedWithItsValue) {
  nlohmann::json json = DevConfig();
  json["num_layers"] = 0;
  absl::StatusOr<FluxTransformerConfig> config =
      ParseFluxTransformerConfig(json, "config.json");
  EXPECT_THAT(config.status().message(),
              HasSubstr("\"num_layers\" is 0; expected a positive integer"));
}

TEST(FluxTransformerConfigTest, ToJsonRoundTrips) {
  absl::StatusOr<FluxTransformerConfig> config =
      ParseFluxTransformerConfig(DevConfig(), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<FluxTransformerConfig> again =
      ParseFluxTransformerConfig(ToJson(*config), "written");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(ToJson(*again), ToJson(*config));
}

}  // namespace
}  // namespace ditserve::models
