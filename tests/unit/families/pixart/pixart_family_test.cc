#include "core/families/pixart/pixart_family.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "core/engine/denoise_loop.h"
#include "core/families/pixart/resolution_binning.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::testing::HasSubstr;

class PixArtFamilyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadOptions options;
    options.attention = std::make_shared<parallel::LocalAttention>();
    options.prompt_encoders = false;
    absl::StatusOr<std::unique_ptr<FamilyModel>> model =
        PixArtFamily().Load(golden_.dir(), options);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
  }

  GenerationRequest Request() const {
    const nlohmann::json& json = golden_.json();
    GenerationRequest request;
    request.prompt.states = golden_.Input("prompt_embeds");
    request.prompt.mask = golden_.Input("prompt_attention_mask");
    request.negative_prompt.states = golden_.Input("negative_prompt_embeds");
    request.negative_prompt.mask =
        golden_.Input("negative_prompt_attention_mask");
    request.height = json.at("height").get<int64_t>();
    request.width = json.at("width").get<int64_t>();
    request.num_inference_steps = json.at("num_inference_steps").get<int>();
    request.guidance_scale = json.at("guidance_scale").get<float>();
    request.seeds = {json.at("generator_seed").get<uint64_t>()};
    return request;
  }

  const GoldenCase golden_{"pipelines/pixart_sigma"};
  std::unique_ptr<FamilyModel> model_;
};

TEST_F(PixArtFamilyTest, DecodeSizeResizesAndCropsTheDecodedImage) {
  const GenerationRequest request = Request();
  absl::StatusOr<at::Tensor> latents =
      engine::Denoise(*model_, request, golden_.Input("latents"), nullptr);
  ASSERT_TRUE(latents.ok()) << latents.status();
  absl::StatusOr<DecodeOutput> decoded =
      model_->Decode(*latents, DecodeRequest{.height = 40, .width = 24});
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->images.rgb.sizes(), (std::vector<int64_t>{1, 40, 24, 3}));
  const models::DecodedImages expected = models::PostprocessDecoded(
      families::ResizeAndCenterCrop(golden_.Output("image_raw"), {40, 24}));
  EXPECT_TRUE(AllClose(decoded->images.image, expected.image, {1e-4, 1e-5}));
}

TEST_F(PixArtFamilyTest, ImageSizeOffTheLatentGridNamesTheMultiple) {
  GenerationRequest request = Request();
  request.height = 36;
  absl::StatusOr<at::Tensor> latents = engine::InitialLatents(*model_, request);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(),
              HasSubstr("image size 36x32 must be positive multiples of 8 "
                        "(VAE scale 4 x patch 2)"));
}

TEST_F(PixArtFamilyTest, LearnedSigmaKeepsTheNoiseHalfOfTheOutput) {
  const at::Tensor output = torch::randn({1, 8, 8, 8});
  EXPECT_TRUE(torch::equal(model_->NoiseOf(output), output.narrow(1, 0, 4)));
}

}  // namespace
}  // namespace ditserve::families
