#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/feed_forward.h"
#include "core/models/layers/rms_norm.h"
#include "core/models/layers/timestep_embeddings.h"

namespace ditserve::models {
namespace {

TEST(RmsNormTest, DividesByRootMeanSquareThenScales) {
  const at::Tensor x = torch::tensor({{3.0F, 4.0F}});
  const at::Tensor weight = torch::tensor({1.0F, 2.0F});
  // rms = sqrt((9 + 16) / 2)
  const float rms = std::sqrt(12.5F);
  const at::Tensor out = RmsNorm(x, weight, 0.0);
  EXPECT_FLOAT_EQ(out[0][0].item<float>(), 3.0F / rms);
  EXPECT_FLOAT_EQ(out[0][1].item<float>(), 2.0F * 4.0F / rms);
}

TEST(RmsNormTest, ModuleRegistersWeightUnderItsDiffusersName) {
  RMSNorm norm(16, 1e-6);
  EXPECT_TRUE(norm->named_parameters().contains("weight"));
}

TEST(SinusoidalTimestepFeaturesTest, CosineHalfComesFirstWhenFlipped) {
  const at::Tensor features = SinusoidalTimestepFeatures(
      torch::tensor({0.0F, 500.0F}), 8, /*flip_sin_to_cos=*/true, 0.0);
  ASSERT_EQ(features.sizes(), (at::IntArrayRef{2, 8}));
  // t = 0: cos half all 1, sin half all 0.
  EXPECT_TRUE(torch::equal(features[0].slice(0, 0, 4), torch::ones({4})));
  EXPECT_TRUE(torch::equal(features[0].slice(0, 4, 8), torch::zeros({4})));
  // Channel 1 has frequency 10000^(-1/4) = 0.1.
  EXPECT_NEAR(features[1][1].item<float>(), std::cos(50.0), 1e-4);
  EXPECT_NEAR(features[1][5].item<float>(), std::sin(50.0), 1e-4);
}

TEST(AdaLayerNormTest, ModulesUseDiffusersParameterNames) {
  EXPECT_EQ(AdaLayerNormZero(8)->named_parameters()["linear.weight"].sizes(),
            (at::IntArrayRef{48, 8}));
  EXPECT_EQ(
      AdaLayerNormZeroSingle(8)->named_parameters()["linear.weight"].sizes(),
      (at::IntArrayRef{24, 8}));
  EXPECT_EQ(AdaLayerNormContinuous(8, 4, 1e-6)
                ->named_parameters()["linear.weight"]
                .sizes(),
            (at::IntArrayRef{16, 4}));
}

TEST(AdaLayerNormContinuousTest, ScaleComesBeforeShiftInTheProjection) {
  torch::NoGradGuard no_grad;
  AdaLayerNormContinuous norm(2, 1, 1e-6);
  auto parameters = norm->named_parameters();
  // A zero weight leaves the bias: rows 0-1 are the scale, rows 2-3 the shift.
  parameters["linear.weight"].zero_();
  parameters["linear.bias"].copy_(torch::tensor({1.0F, 1.0F, 5.0F, 5.0F}));
  const at::Tensor x = torch::tensor({{{-1.0F, 1.0F}}});
  const at::Tensor out = norm->Forward(x, torch::zeros({1, 1}));
  // norm(x) = (-1, 1); * (1 + 1) + 5.
  EXPECT_NEAR(out[0][0][0].item<float>(), 3.0F, 1e-4);
  EXPECT_NEAR(out[0][0][1].item<float>(), 7.0F, 1e-4);
}

TEST(FeedForwardTest, ParametersAreNetZeroProjAndNetTwo) {
  FeedForward ff(8, 8, 4);
  const auto parameters = ff->named_parameters();
  EXPECT_EQ(parameters["net.0.proj.weight"].sizes(), (at::IntArrayRef{32, 8}));
  EXPECT_EQ(parameters["net.2.weight"].sizes(), (at::IntArrayRef{8, 32}));
  EXPECT_EQ(parameters.size(), 4U);
}

TEST(CombinedEmbeddingsTest, GuidanceVariantAddsAGuidanceEmbedder) {
  EXPECT_TRUE(CombinedTimestepGuidanceTextProjEmbeddings(8, 4)
                  ->named_parameters()
                  .contains("guidance_embedder.linear_1.weight"));
  EXPECT_FALSE(
      CombinedTimestepTextProjEmbeddings(8, 4)->named_parameters().contains(
          "guidance_embedder.linear_1.weight"));
}

}  // namespace
}  // namespace ditserve::models
