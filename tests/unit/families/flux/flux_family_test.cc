#include "core/families/flux/flux_family.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>

#include "core/engine/denoise_loop.h"
#include "core/models/initial_noise.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::GoldenCase;
using ::testing::HasSubstr;

class FluxFamilyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Load();
    ASSERT_NE(model_, nullptr);
  }

  std::unique_ptr<FamilyModel> Load() const {
    LoadOptions options;
    options.attention = std::make_shared<parallel::LocalAttention>();
    options.prompt_encoders = false;
    absl::StatusOr<std::unique_ptr<FamilyModel>> model =
        FluxFamily().Load(golden_.dir(), options);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : nullptr;
  }

  GenerationRequest Request() const {
    const nlohmann::json& json = golden_.json();
    GenerationRequest request;
    request.prompt.states = golden_.Input("prompt_embeds");
    request.prompt.pooled = golden_.Input("pooled_prompt_embeds");
    request.height = json.at("height").get<int64_t>();
    request.width = json.at("width").get<int64_t>();
    request.num_inference_steps = json.at("num_inference_steps").get<int>();
    request.guidance_scale = json.at("guidance_scale").get<float>();
    request.seeds = {json.at("generator_seed").get<uint64_t>()};
    return request;
  }

  const GoldenCase golden_{"pipelines/flux_schnell"};
  std::unique_ptr<FamilyModel> model_;
};

TEST_F(FluxFamilyTest, NoiseIsDrawnUnpackedAndPackedTwoByTwo) {
  const at::Tensor unpacked = golden_.Input("latents_unpacked");
  const GenerationRequest request = Request();
  EXPECT_EQ(model_->NoiseShape(request), unpacked.sizes().vec());
  EXPECT_TRUE(torch::equal(
      models::InitialNoise(request.seeds[0], unpacked.sizes()), unpacked));
  EXPECT_TRUE(
      torch::equal(model_->PackLatents(unpacked), golden_.Input("latents")));
  EXPECT_TRUE(torch::equal(
      model_->UnpackLatents(golden_.Input("latents"), request), unpacked));
}

TEST_F(FluxFamilyTest, SizeNotAMultipleOfThePackedVaeScaleIsRejected) {
  GenerationRequest request = Request();
  request.height = 36;
  absl::StatusOr<DecodeOutput> result =
      engine::Generate(*model_, request, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("height 36 is not a positive multiple of 8"));
}

TEST_F(FluxFamilyTest, GuidanceGoesIntoTheEmbeddingNotABatch) {
  EXPECT_EQ(model_->guidance_rule(), GuidanceRule::kEmbedded);
  GenerationRequest request = Request();
  request.guidance_scale = 7.0F;
  int64_t model_batch = 0;
  absl::StatusOr<DecodeOutput> result = engine::Generate(
      *model_, request, [&model_batch](const engine::StepEvent& event) {
        model_batch = event.noise_pred.size(0);
        return absl::OkStatus();
      });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(model_batch, 1);
}

// The position ids kept from one size are not used for another: after a
// generation at the golden size, one 16 pixels wider equals a fresh model's.
TEST_F(FluxFamilyTest, EachSizeGetsItsOwnPositionIds) {
  GenerationRequest request = Request();
  request.num_inference_steps = 1;
  ASSERT_TRUE(engine::Generate(*model_, request, nullptr).ok());
  request.width += 16;
  const absl::StatusOr<DecodeOutput> after =
      engine::Generate(*model_, request, nullptr);
  const std::unique_ptr<FamilyModel> fresh = Load();
  ASSERT_NE(fresh, nullptr);
  const absl::StatusOr<DecodeOutput> alone =
      engine::Generate(*fresh, request, nullptr);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_TRUE(torch::equal(after->vae_input, alone->vae_input));
}

TEST_F(FluxFamilyTest, EncodingWithoutPromptEncodersIsAFailedPrecondition) {
  absl::StatusOr<Conditioning> conditioning =
      model_->EncodePrompts({"a fox"}, 16);
  EXPECT_EQ(conditioning.status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ditserve::families
