#include "core/families/pixart/pixart_transformer_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

using ::testing::HasSubstr;

// PixArt-Σ-like config without the optional fields.
nlohmann::json MinimalConfig() {
  return {{"num_attention_heads", 2}, {"attention_head_dim", 24},
          {"in_channels", 4},         {"out_channels", 8},
          {"num_layers", 2},          {"cross_attention_dim", 48},
          {"caption_channels", 32},   {"sample_size", 128},
          {"patch_size", 2}};
}

TEST(PixArtTransformerConfigTest, OmittedFieldsFollowDiffusersDefaults) {
  absl::StatusOr<PixArtTransformerConfig> config =
      ParsePixArtTransformerConfig(MinimalConfig(), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  // sample_size 128: interpolation max(128 / 64, 1) and α's micro-conditions.
  EXPECT_EQ(config->interpolation_scale, 2.0);
  EXPECT_TRUE(config->use_additional_conditions);
  EXPECT_TRUE(config->attention_bias);
  EXPECT_EQ(config->norm_eps, 1e-6);
  EXPECT_EQ(config->base_size(), 64);
}

TEST(PixArtTransformerConfigTest, SmallSampleSizeHasNoMicroConditions) {
  nlohmann::json json = MinimalConfig();
  json["sample_size"] = 64;
  absl::StatusOr<PixArtTransformerConfig> config =
      ParsePixArtTransformerConfig(json, "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->interpolation_scale, 1.0);
  EXPECT_FALSE(config->use_additional_conditions);
}

TEST(PixArtTransformerConfigTest, OtherNormTypeIsAnError) {
  nlohmann::json json = MinimalConfig();
  json["norm_type"] = "ada_norm_zero";
  absl::StatusOr<PixArtTransformerConfig> config =
      ParsePixArtTransformerConfig(json, "config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("norm_type is \"ada_norm_zero\"; only "
                        "\"ada_norm_single\" is implemented"));
}

TEST(PixArtTransformerConfigTest, CrossAttentionWidthMustMatchTheInnerDim) {
  nlohmann::json json = MinimalConfig();
  json["cross_attention_dim"] = 64;
  absl::StatusOr<PixArtTransformerConfig> config =
      ParsePixArtTransformerConfig(json, "config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("cross_attention_dim 64 must equal "
                        "num_attention_heads * attention_head_dim 48"));
}

TEST(PixArtTransformerConfigTest, MicroConditionsNeedAnInnerDimDivisibleBy3) {
  nlohmann::json json = MinimalConfig();
  json["attention_head_dim"] = 32;
  json["cross_attention_dim"] = 64;
  absl::StatusOr<PixArtTransformerConfig> config =
      ParsePixArtTransformerConfig(json, "config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("inner dim 64 must be divisible by 3"));
}

}  // namespace
}  // namespace ditserve::models
