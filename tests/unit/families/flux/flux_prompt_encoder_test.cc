#include "core/families/flux/flux_prompt_encoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/engine/denoise_loop.h"
#include "core/families/flux/flux_family.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::Uint8Close;
using ::testing::HasSubstr;

class FluxTextGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = std::make_unique<GoldenCase>("pipelines/flux_dev_text");
    absl::StatusOr<std::unique_ptr<FluxPromptEncoder>> encoder =
        FluxPromptEncoder::Load(golden_->dir(), models::Placement{});
    ASSERT_TRUE(encoder.ok()) << encoder.status();
    encoder_ = *std::move(encoder);
  }

  std::vector<std::string> Prompts() const {
    return golden_->json().at("prompt").get<std::vector<std::string>>();
  }
  int MaxSequenceLength() const {
    return golden_->json().at("max_sequence_length").get<int>();
  }

  void ExpectClose(const at::Tensor& actual, const std::string& output) {
    EXPECT_TRUE(AllClose(actual, golden_->Output(output),
                         golden_->ToleranceFor(output)))
        << output;
  }

  std::unique_ptr<GoldenCase> golden_;
  std::unique_ptr<FluxPromptEncoder> encoder_;
};

TEST_F(FluxTextGoldenTest, EncodesThePromptAsFluxPipelineDoes) {
  absl::StatusOr<FluxPromptEmbeddings> embeddings =
      encoder_->Encode(Prompts(), MaxSequenceLength());
  ASSERT_TRUE(embeddings.ok()) << embeddings.status();
  ExpectClose(embeddings->clip_input_ids, "clip_input_ids");
  ExpectClose(embeddings->t5_input_ids, "t5_input_ids");
  ExpectClose(embeddings->prompt_embeds, "prompt_embeds");
  ExpectClose(embeddings->pooled_prompt_embeds, "pooled_prompt_embeds");
}

TEST_F(FluxTextGoldenTest, PromptStringToImageMatchesDiffusers) {
  families::LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
      families::FluxFamily().Load(golden_->dir(), options);
  ASSERT_TRUE(model.ok()) << model.status();
  const nlohmann::json& json = golden_->json();
  families::GenerationRequest request;
  absl::StatusOr<families::Conditioning> prompt =
      (*model)->EncodePrompts(Prompts(), MaxSequenceLength());
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  request.prompt = *prompt;
  request.height = json.at("height").get<int64_t>();
  request.width = json.at("width").get<int64_t>();
  request.num_inference_steps = json.at("num_inference_steps").get<int>();
  request.guidance_scale = json.at("guidance_scale").get<float>();
  request.seeds = {json.at("generator_seed").get<uint64_t>()};
  absl::StatusOr<families::DecodeOutput> output =
      engine::Generate(**model, request, nullptr);
  ASSERT_TRUE(output.ok()) << output.status();
  ExpectClose(output->vae_input, "vae_input");
  ExpectClose(output->images.image, "image");
  EXPECT_TRUE(Uint8Close(output->images.rgb, golden_->Output("image_uint8"),
                         /*atol=*/1, /*max_fraction_differing=*/0.01));
}

TEST_F(FluxTextGoldenTest, InvalidUtf8PromptIsAnErrorNamingThePrompt) {
  absl::StatusOr<FluxPromptEmbeddings> embeddings =
      encoder_->Encode({"fine", "bad \xC3"}, MaxSequenceLength());
  ASSERT_EQ(embeddings.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(embeddings.status().message(), HasSubstr("prompt[1]"));
}

TEST(FluxPromptEncoderLoadTest, MissingTokenizerIsNamed) {
  absl::StatusOr<std::unique_ptr<FluxPromptEncoder>> encoder =
      FluxPromptEncoder::Load("/nonexistent/checkpoint", models::Placement{});
  ASSERT_FALSE(encoder.ok());
  EXPECT_THAT(encoder.status().message(), HasSubstr("/nonexistent/checkpoint"));
}

}  // namespace
}  // namespace ditserve::families
