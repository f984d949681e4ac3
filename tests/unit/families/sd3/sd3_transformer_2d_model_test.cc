#include "core/families/sd3/sd3_transformer_2d_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/parallel/local_attention.h"
#include "tests/unit/models/cfg_golden_inputs.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::models {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::InDType;
using ::ditserve::testing::SD3GoldenInputs;
using ::testing::HasSubstr;

std::shared_ptr<SD3Transformer2DModel> LoadGoldenModel(
    const GoldenCase& golden) {
  absl::StatusOr<std::shared_ptr<SD3Transformer2DModel>> model =
      LoadSD3Transformer2DModel(golden.dir(),
                                std::make_shared<parallel::LocalAttention>(),
                                Placement{});
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

void ExpectGoldenSample(const std::string& case_dir) {
  const GoldenCase golden(case_dir);
  std::shared_ptr<SD3Transformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = model->Forward(SD3GoldenInputs(golden));
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

std::shared_ptr<SD3Transformer2DModel> LoadBfloat16Model(
    const GoldenCase& golden) {
  absl::StatusOr<std::shared_ptr<SD3Transformer2DModel>> model =
      LoadSD3Transformer2DModel(golden.dir(),
                                std::make_shared<parallel::LocalAttention>(),
                                Placement{.dtype = at::kBFloat16});
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// The golden inputs as a pipeline in bfloat16 passes them: the timestep
// stays float32, as in diffusers.
SD3TransformerInputs Bfloat16Inputs(const GoldenCase& golden) {
  SD3TransformerInputs inputs = SD3GoldenInputs(golden);
  for (at::Tensor* input :
       {&inputs.hidden_states, &inputs.encoder_hidden_states,
        &inputs.pooled_projections}) {
    *input = InDType(*input, at::kBFloat16);
  }
  return inputs;
}

void ExpectBfloat16Sample(const std::string& case_dir) {
  const GoldenCase golden(case_dir);
  std::shared_ptr<SD3Transformer2DModel> model = LoadBfloat16Model(golden);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = model->Forward(Bfloat16Inputs(golden));
  ASSERT_TRUE(sample.ok()) << sample.status();
  golden.ExpectBfloat16Close(*sample, "sample");
}

// bfloat16 holds 987 as 988; the sinusoidal features of the two differ.
TEST(SD3Transformer2DModelTest, Bfloat16ModelEmbedsTheFloat32Timestep) {
  const GoldenCase golden("models/sd3");
  std::shared_ptr<SD3Transformer2DModel> model = LoadBfloat16Model(golden);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  SD3TransformerInputs inputs = Bfloat16Inputs(golden);
  std::vector<at::Tensor> samples;
  for (const float timestep : {987.0F, 988.0F}) {
    inputs.timestep = at::full_like(inputs.timestep, timestep, at::kFloat);
    absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
    ASSERT_TRUE(sample.ok()) << sample.status();
    samples.push_back(*sample);
  }
  EXPECT_FALSE(at::equal(samples[0], samples[1]));
}

TEST(SD3Transformer2DModelTest, MediumInBfloat16IsWithinTheDerivedTolerance) {
  ExpectBfloat16Sample("models/sd3");
}

TEST(SD3Transformer2DModelTest, SD35InBfloat16IsWithinTheDerivedTolerance) {
  ExpectBfloat16Sample("models/sd35");
}

TEST(SD3Transformer2DModelTest, MediumMatchesDiffusers) {
  ExpectGoldenSample("models/sd3");
}

TEST(SD3Transformer2DModelTest,
     SD35WithQkNormAndDualAttentionMatchesDiffusers) {
  ExpectGoldenSample("models/sd35");
}

TEST(SD3Transformer2DModelTest, LastBlockHasNoTextOutputLayers) {
  const GoldenCase golden("models/sd3");
  std::shared_ptr<SD3Transformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  const auto parameters = model->named_parameters();
  EXPECT_TRUE(
      parameters.contains("transformer_blocks.0.attn.to_add_out.weight"));
  EXPECT_TRUE(
      parameters.contains("transformer_blocks.0.ff_context.net.2.weight"));
  EXPECT_FALSE(
      parameters.contains("transformer_blocks.1.attn.to_add_out.weight"));
  EXPECT_FALSE(
      parameters.contains("transformer_blocks.1.ff_context.net.2.weight"));
}

TEST(SD3Transformer2DModelTest, UnservableLatentGridNamesTheLimit) {
  const GoldenCase golden("models/sd3");
  std::shared_ptr<SD3Transformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  const struct {
    int64_t height;
    int64_t width;
    std::string error;
  } cases[] = {
      {34, 8,
       "hidden_states is 34x8; the position table covers 32x32 "
       "(pos_embed_max_size 16 x patch_size 2)"},
      {8, 7,
       "hidden_states is 8x7; height and width must be multiples of "
       "patch_size 2"},
  };
  for (const auto& grid : cases) {
    SCOPED_TRACE(grid.error);
    SD3TransformerInputs inputs = SD3GoldenInputs(golden);
    inputs.hidden_states = torch::zeros({2, 16, grid.height, grid.width});
    absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
    EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(sample.status().message(), HasSubstr(grid.error));
  }
}

TEST(SD3Transformer2DModelTest, WrongPooledWidthNamesTheInputAndShapes) {
  const GoldenCase golden("models/sd35");
  std::shared_ptr<SD3Transformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  SD3TransformerInputs inputs = SD3GoldenInputs(golden);
  inputs.pooled_projections = torch::zeros({2, 64});
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("pooled_projections has shape [2, 64]; expected "
                        "[2, 48]"));
}

TEST(SD3TransformerConfigTest, DualAttentionLayerOutsideTheModelIsAnError) {
  const nlohmann::json json = {
      {"sample_size", 16},           {"patch_size", 2},
      {"in_channels", 16},           {"num_layers", 2},
      {"attention_head_dim", 8},     {"num_attention_heads", 4},
      {"joint_attention_dim", 32},   {"caption_projection_dim", 32},
      {"pooled_projection_dim", 48}, {"pos_embed_max_size", 16},
      {"dual_attention_layers", {2}}};
  absl::StatusOr<SD3TransformerConfig> config =
      ParseSD3TransformerConfig(json, "transformer/config.json");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("dual_attention_layers is [2]; expected a list of "
                        "block indices in [0, 2)"));
}

}  // namespace
}  // namespace ditserve::models
