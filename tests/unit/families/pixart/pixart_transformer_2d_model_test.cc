#include "core/families/pixart/pixart_transformer_2d_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "core/parallel/local_attention.h"
#include "tests/unit/models/cfg_golden_inputs.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::models {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::InDType;
using ::ditserve::testing::PixArtGoldenInputs;
using ::ditserve::testing::PixArtGoldenMicroConditions;
using ::testing::HasSubstr;

std::shared_ptr<PixArtTransformer2DModel> LoadGoldenModel(
    const GoldenCase& golden) {
  absl::StatusOr<std::shared_ptr<PixArtTransformer2DModel>> model =
      LoadPixArtTransformer2DModel(golden.dir(),
                                   std::make_shared<parallel::LocalAttention>(),
                                   Placement{});
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

TEST(PixArtTransformer2DModelTest, AlphaMatchesDiffusersWithMicroConditions) {
  const GoldenCase golden("models/pixart_alpha");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  inputs.micro_conditions = PixArtGoldenMicroConditions(golden);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

TEST(PixArtTransformer2DModelTest,
     SigmaMatchesDiffusersWithInterpolationScale2) {
  const GoldenCase golden("models/pixart_sigma");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample =
      model->Forward(PixArtGoldenInputs(golden));
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

// A bfloat16 model on bfloat16 inputs, as a pipeline in that dtype runs it.
void ExpectBfloat16Sample(const std::string& case_dir, bool micro_conditions) {
  const GoldenCase golden(case_dir);
  absl::StatusOr<std::shared_ptr<PixArtTransformer2DModel>> model =
      LoadPixArtTransformer2DModel(golden.dir(),
                                   std::make_shared<parallel::LocalAttention>(),
                                   Placement{.dtype = at::kBFloat16});
  ASSERT_TRUE(model.ok()) << model.status();
  PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  inputs.hidden_states = InDType(inputs.hidden_states, at::kBFloat16);
  inputs.encoder_hidden_states =
      InDType(inputs.encoder_hidden_states, at::kBFloat16);
  if (micro_conditions) {
    const PixArtMicroConditions conditions =
        PixArtGoldenMicroConditions(golden);
    inputs.micro_conditions = PixArtMicroConditions{
        .resolution = InDType(conditions.resolution, at::kBFloat16),
        .aspect_ratio = InDType(conditions.aspect_ratio, at::kBFloat16)};
  }
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = (*model)->Forward(inputs);
  ASSERT_TRUE(sample.ok()) << sample.status();
  golden.ExpectBfloat16Close(*sample, "sample");
}

TEST(PixArtTransformer2DModelTest, AlphaInBfloat16IsWithinTheDerivedTolerance) {
  ExpectBfloat16Sample("models/pixart_alpha", /*micro_conditions=*/true);
}

TEST(PixArtTransformer2DModelTest, SigmaInBfloat16IsWithinTheDerivedTolerance) {
  ExpectBfloat16Sample("models/pixart_sigma", /*micro_conditions=*/false);
}

TEST(PixArtTransformer2DModelTest, MaskedCaptionTokensDoNotChangeTheOutput) {
  const GoldenCase golden("models/pixart_sigma");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  const at::Tensor mask = torch::ones({2, 8}, torch::kLong);
  mask.slice(1, 5).zero_();
  inputs.encoder_attention_mask = mask;
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> reference = model->Forward(inputs);
  ASSERT_TRUE(reference.ok()) << reference.status();
  inputs.encoder_hidden_states = inputs.encoder_hidden_states.clone();
  inputs.encoder_hidden_states.slice(1, 5).normal_();
  absl::StatusOr<at::Tensor> changed_padding = model->Forward(inputs);
  ASSERT_TRUE(changed_padding.ok()) << changed_padding.status();
  EXPECT_TRUE(torch::allclose(*reference, *changed_padding, 0, 1e-5));
}

// The position table kept from a forward at the golden size is not used for
// a larger latent grid: the model gives what a fresh one gives.
TEST(PixArtTransformer2DModelTest, LargerLatentGridGetsItsOwnPositionTable) {
  const GoldenCase golden("models/pixart_sigma");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(golden);
  std::shared_ptr<PixArtTransformer2DModel> fresh = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  ASSERT_NE(fresh, nullptr);
  PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  torch::NoGradGuard no_grad;
  ASSERT_TRUE(model->Forward(inputs).ok());
  torch::manual_seed(0);
  inputs.hidden_states = torch::randn({2, 4, 12, 16});
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  absl::StatusOr<at::Tensor> alone = fresh->Forward(inputs);
  ASSERT_TRUE(sample.ok()) << sample.status();
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(sample->sizes(), (std::vector<int64_t>{2, 8, 12, 16}));
  EXPECT_TRUE(at::equal(*sample, *alone));
}

TEST(PixArtTransformer2DModelTest, MissingMicroConditionsAreAnErrorForAlpha) {
  const GoldenCase golden("models/pixart_alpha");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  absl::StatusOr<at::Tensor> sample =
      model->Forward(PixArtGoldenInputs(golden));
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("use_additional_conditions=true"));
}

TEST(PixArtTransformer2DModelTest, MicroConditionsAreAnErrorForSigma) {
  const GoldenCase sigma("models/pixart_sigma");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(sigma);
  ASSERT_NE(model, nullptr);
  PixArtTransformerInputs inputs = PixArtGoldenInputs(sigma);
  inputs.micro_conditions =
      PixArtMicroConditions{torch::ones({2, 2}), torch::ones({2, 1})};
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("use_additional_conditions=false"));
}

TEST(PixArtTransformer2DModelTest, OddLatentSideNamesThePatchSize) {
  const GoldenCase golden("models/pixart_sigma");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  inputs.hidden_states = torch::zeros({2, 4, 9, 8});
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("hidden_states is 9x8; height and width must be "
                        "multiples of patch_size 2"));
}

TEST(PixArtTransformer2DModelTest, WrongCaptionWidthNamesTheInputAndShapes) {
  const GoldenCase golden("models/pixart_sigma");
  std::shared_ptr<PixArtTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  inputs.encoder_hidden_states = torch::zeros({2, 8, 16});
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("encoder_hidden_states has shape [2, 8, 16]; "
                        "expected [2, *, 32]"));
}

}  // namespace
}  // namespace ditserve::models
