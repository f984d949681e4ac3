#include <string>

#include "absl/status/status.h"
#include "core/models/text/clip_text_config.h"
#include "core/models/text/t5_encoder_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::models {
namespace {

using ::testing::HasSubstr;

nlohmann::json T5Json() {
  return {{"vocab_size", 400}, {"d_model", 32},   {"d_kv", 8},
          {"d_ff", 64},        {"num_layers", 2}, {"num_heads", 4}};
}

nlohmann::json ClipJson() {
  return {{"vocab_size", 914},
          {"hidden_size", 32},
          {"intermediate_size", 64},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 4}};
}

TEST(T5EncoderConfigTest, GatedGeluMeansGatedTanhGelu) {
  nlohmann::json json = T5Json();
  json["feed_forward_proj"] = "gated-gelu";
  absl::StatusOr<T5EncoderConfig> config =
      T5EncoderConfig::FromJson(json, "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->is_gated_act);
  EXPECT_EQ(config->dense_act_fn, TextActivation::kGeluTanh);
}

TEST(T5EncoderConfigTest, OmittedFieldsTakeT5ConfigDefaults) {
  absl::StatusOr<T5EncoderConfig> config =
      T5EncoderConfig::FromJson(T5Json(), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->is_gated_act);
  EXPECT_EQ(config->dense_act_fn, TextActivation::kRelu);
  EXPECT_EQ(config->relative_attention_num_buckets, 32);
  EXPECT_EQ(config->relative_attention_max_distance, 128);
  EXPECT_DOUBLE_EQ(config->layer_norm_epsilon, 1e-6);
}

TEST(T5EncoderConfigTest, MalformedFeedForwardProjIsAnError) {
  nlohmann::json json = T5Json();
  json["feed_forward_proj"] = "double-gated-gelu";
  absl::StatusOr<T5EncoderConfig> config =
      T5EncoderConfig::FromJson(json, "te2/config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("te2/config.json"));
  EXPECT_THAT(config.status().message(), HasSubstr("double-gated-gelu"));
}

TEST(T5EncoderConfigTest, MissingDimensionIsAnErrorNamingTheField) {
  nlohmann::json json = T5Json();
  json.erase("d_kv");
  absl::StatusOr<T5EncoderConfig> config =
      T5EncoderConfig::FromJson(json, "config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("d_kv"));
}

TEST(CLIPTextConfigTest, OmittedFieldsTakeCLIPTextConfigDefaults) {
  absl::StatusOr<CLIPTextConfig> config =
      CLIPTextConfig::FromJson(ClipJson(), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->hidden_act, TextActivation::kQuickGelu);
  EXPECT_EQ(config->eos_token_id, 2);
  EXPECT_EQ(config->max_position_embeddings, 77);
  EXPECT_DOUBLE_EQ(config->layer_norm_eps, 1e-5);
}

TEST(CLIPTextConfigTest, UnknownActivationIsAnError) {
  nlohmann::json json = ClipJson();
  json["hidden_act"] = "swish_v9";
  absl::StatusOr<CLIPTextConfig> config =
      CLIPTextConfig::FromJson(json, "text_encoder/config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("swish_v9"));
}

TEST(CLIPTextConfigTest, HeadsMustDivideHiddenSize) {
  nlohmann::json json = ClipJson();
  json["num_attention_heads"] = 5;
  absl::StatusOr<CLIPTextConfig> config =
      CLIPTextConfig::FromJson(json, "config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("hidden_size 32 is not a multiple of "
                        "num_attention_heads 5"));
}

}  // namespace
}  // namespace ditserve::models
