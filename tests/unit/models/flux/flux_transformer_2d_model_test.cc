#include "core/models/flux/flux_transformer_2d_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "core/models/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::models {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::testing::HasSubstr;

std::shared_ptr<FluxTransformer2DModel> LoadGoldenModel(
    const GoldenCase& golden) {
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> model =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{});
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

FluxTransformerInputs GoldenInputs(const GoldenCase& golden) {
  FluxTransformerInputs inputs;
  inputs.hidden_states = golden.Input("hidden_states");
  inputs.encoder_hidden_states = golden.Input("encoder_hidden_states");
  inputs.pooled_projections = golden.Input("pooled_projections");
  inputs.timestep = golden.Input("timestep");
  inputs.img_ids = golden.Input("img_ids");
  inputs.txt_ids = golden.Input("txt_ids");
  return inputs;
}

TEST(FluxTransformer2DModelTest, DevMatchesDiffusersWithGuidanceEmbedding) {
  const GoldenCase golden("models/flux_dev");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  FluxTransformerInputs inputs = GoldenInputs(golden);
  inputs.guidance = golden.Input("guidance");
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

TEST(FluxTransformer2DModelTest, SchnellMatchesDiffusersWithoutGuidance) {
  const GoldenCase golden("models/flux_schnell");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = model->Forward(GoldenInputs(golden));
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

TEST(FluxTransformer2DModelTest, MissingGuidanceIsAnErrorForDevModels) {
  const GoldenCase golden("models/flux_dev");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  absl::StatusOr<at::Tensor> sample = model->Forward(GoldenInputs(golden));
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(), HasSubstr("guidance is missing"));
}

TEST(FluxTransformer2DModelTest, GuidanceIsAnErrorForSchnellModels) {
  const GoldenCase golden("models/flux_schnell");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  FluxTransformerInputs inputs = GoldenInputs(golden);
  inputs.guidance = torch::full({2}, 3.5);
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(), HasSubstr("guidance_embeds=false"));
}

TEST(FluxTransformer2DModelTest, WrongChannelCountNamesTheInputAndShapes) {
  const GoldenCase golden("models/flux_schnell");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  FluxTransformerInputs inputs = GoldenInputs(golden);
  inputs.hidden_states = torch::zeros({2, 16, 32});
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("hidden_states has shape [2, 16, 32]; expected [*, "
                        "*, 64]"));
}

TEST(FluxTransformer2DModelTest, BlockRangeBuildsAndLoadsOnlyThoseBlocks) {
  const GoldenCase golden("models/flux_dev");
  // Blocks in execution order: transformer_blocks.0, then
  // single_transformer_blocks.0 and .1; this stage holds the last one.
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> stage =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{}, FluxBlockRange{2, 3});
  ASSERT_TRUE(stage.ok()) << stage.status();
  bool has_block_1 = false;
  for (const auto& parameter : (*stage)->named_parameters()) {
    EXPECT_THAT(parameter.key(), ::testing::Not(HasSubstr("blocks.0.")));
    has_block_1 |=
        parameter.key().rfind("single_transformer_blocks.1.", 0) == 0;
  }
  EXPECT_TRUE(has_block_1);
  absl::StatusOr<io::TensorMap> weights =
      io::ReadAllTensors(golden.dir() + "/diffusion_pytorch_model.safetensors");
  ASSERT_TRUE(weights.ok()) << weights.status();
  const std::string name = "single_transformer_blocks.1.proj_out.weight";
  EXPECT_TRUE((*stage)->named_parameters()[name].equal(weights->at(name)));
}

TEST(FluxTransformer2DModelTest, PartialModelRefusesAWholeForward) {
  const GoldenCase golden("models/flux_schnell");
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> stage =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{}, FluxBlockRange{0, 1});
  ASSERT_TRUE(stage.ok()) << stage.status();
  absl::StatusOr<at::Tensor> sample = (*stage)->Forward(GoldenInputs(golden));
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(sample.status().message(), HasSubstr("holds blocks [0, 1) of 3"));
}

TEST(FluxTransformer2DModelTest, EmptyOrOutOfRangeBlockRangeIsAnError) {
  absl::StatusOr<FluxTransformerConfig> config =
      ReadFluxTransformerConfig(std::string(DITSERVE_TEST_DATA_DIR) +
                                "/golden/models/flux_dev/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  for (const FluxBlockRange range :
       {FluxBlockRange{1, 1}, FluxBlockRange{0, 4}, FluxBlockRange{-1, 2}}) {
    absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> model =
        FluxTransformer2DModel::Create(
            *config, std::make_shared<parallel::LocalAttention>(), range);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument)
        << range.begin << ".." << range.end;
  }
}

}  // namespace
}  // namespace ditserve::models
