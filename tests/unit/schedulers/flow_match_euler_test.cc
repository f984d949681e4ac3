#include "core/schedulers/flow_match_euler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/schedulers/numpy_compat.h"

namespace ditserve::schedulers {
namespace {

using ::testing::HasSubstr;

FlowMatchEulerConfig FluxDevConfig() {
  FlowMatchEulerConfig config;
  config.shift = 3.0;
  config.use_dynamic_shifting = true;
  return config;
}

TEST(FlowMatchEulerTest, CalculateShiftIsLinearBetweenBaseAndMax) {
  FlowMatchEulerConfig config = FluxDevConfig();
  EXPECT_DOUBLE_EQ(CalculateShift(256, config), 0.5);
  EXPECT_DOUBLE_EQ(CalculateShift(4096, config), 1.15);
  EXPECT_NEAR(CalculateShift(1024, config), 0.63, 1e-12);
  // Below the base length it extrapolates, as the FLUX pipeline does.
  EXPECT_NEAR(CalculateShift(16, config), 0.459375, 1e-12);
}

TEST(FlowMatchEulerTest, DynamicShiftingWithoutMuIsAnError) {
  FlowMatchEulerDiscreteScheduler scheduler(FluxDevConfig());
  absl::Status status = scheduler.SetTimesteps(4);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("mu"));
}

TEST(FlowMatchEulerTest, DynamicShiftMovesSigmasTowardsOne) {
  FlowMatchEulerDiscreteScheduler scheduler(FluxDevConfig());
  TimestepOptions options;
  options.sigmas = Linspace(1.0, 0.25, 4);
  options.mu = 1.15;
  ASSERT_TRUE(scheduler.SetTimesteps(4, options).ok());
  // sigma' = e^mu / (e^mu + 1/sigma - 1): 0.25 -> e^1.15 / (e^1.15 + 3).
  const double e = std::exp(1.15);
  EXPECT_NEAR(scheduler.sigmas()[3].item<double>(), e / (e + 3), 1e-6);
  EXPECT_EQ(scheduler.sigmas()[4].item<double>(), 0.0);
  EXPECT_NEAR(scheduler.timesteps()[3].item<double>(), 1000 * e / (e + 3),
              1e-3);
}

TEST(FlowMatchEulerTest, ShiftOfOneKeepsThePipelineSigmas) {
  FlowMatchEulerDiscreteScheduler scheduler{FlowMatchEulerConfig{}};
  TimestepOptions options;
  options.sigmas = Linspace(1.0, 0.25, 4);
  ASSERT_TRUE(scheduler.SetTimesteps(4, options).ok());
  EXPECT_TRUE(torch::equal(scheduler.sigmas(),
                           torch::tensor({1.0f, 0.75f, 0.5f, 0.25f, 0.0f})));
  EXPECT_TRUE(torch::equal(scheduler.timesteps(),
                           torch::tensor({1000.0f, 750.0f, 500.0f, 250.0f})));
}

TEST(FlowMatchEulerTest, SigmaCountMustMatchTheStepCount) {
  FlowMatchEulerDiscreteScheduler scheduler{FlowMatchEulerConfig{}};
  TimestepOptions options;
  options.sigmas = {1.0, 0.5};
  EXPECT_EQ(scheduler.SetTimesteps(3, options).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler.SetTimesteps(0).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FlowMatchEulerTest, StepIsAnEulerStepAlongTheVelocity) {
  FlowMatchEulerDiscreteScheduler scheduler{FlowMatchEulerConfig{}};
  TimestepOptions options;
  options.sigmas = {1.0, 0.5};
  ASSERT_TRUE(scheduler.SetTimesteps(2, options).ok());
  at::Tensor sample = torch::full({2, 3}, 2.0f);
  at::Tensor velocity = torch::full({2, 3}, 4.0f);
  auto first = scheduler.Step(velocity, sample);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(torch::allclose(first->prev_sample, sample - 0.5 * velocity));
  EXPECT_EQ(scheduler.step_index(), 1);
  auto second = scheduler.Step(velocity, first->prev_sample);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(torch::allclose(second->prev_sample, torch::full({2, 3}, -2.0f)));
}

// A sample on the straight path between x0 and noise, with the exact
// velocity noise − x0, gives back x0 at every sigma.
TEST(FlowMatchEulerTest, ThePredictedOriginalSampleIsTheCleanEnd) {
  FlowMatchEulerDiscreteScheduler scheduler{FlowMatchEulerConfig{}};
  TimestepOptions options;
  options.sigmas = {1.0, 0.75, 0.25};
  ASSERT_TRUE(scheduler.SetTimesteps(3, options).ok());
  const at::Tensor clean = torch::tensor({0.5f, -1.5f, 2.0f});
  const at::Tensor noise = torch::tensor({1.0f, 0.25f, -3.0f});
  for (const float sigma : {1.0f, 0.75f, 0.25f}) {
    const at::Tensor sample = (1 - sigma) * clean + sigma * noise;
    auto stepped = scheduler.Step(noise - clean, sample);
    ASSERT_TRUE(stepped.ok()) << stepped.status();
    EXPECT_TRUE(torch::allclose(stepped->pred_original_sample, clean))
        << "sigma " << sigma << ": " << stepped->pred_original_sample;
  }
}

TEST(FlowMatchEulerTest, StepPastTheLastTimestepIsAnError) {
  FlowMatchEulerDiscreteScheduler scheduler{FlowMatchEulerConfig{}};
  at::Tensor x = torch::zeros({1});
  EXPECT_EQ(scheduler.Step(x, x).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(scheduler.SetTimesteps(1).ok());
  ASSERT_TRUE(scheduler.Step(x, x).ok());
  EXPECT_EQ(scheduler.Step(x, x).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(FlowMatchEulerTest, StepKeepsTheModelOutputDtype) {
  FlowMatchEulerDiscreteScheduler scheduler{FlowMatchEulerConfig{}};
  ASSERT_TRUE(scheduler.SetTimesteps(2).ok());
  auto out = scheduler.Step(torch::ones({4}, torch::kBFloat16),
                            torch::ones({4}, torch::kBFloat16));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->prev_sample.scalar_type(), torch::kBFloat16);
}

TEST(FlowMatchEulerTest, MismatchedShapesAreAnError) {
  FlowMatchEulerDiscreteScheduler scheduler{FlowMatchEulerConfig{}};
  ASSERT_TRUE(scheduler.SetTimesteps(2).ok());
  EXPECT_EQ(
      scheduler.Step(torch::ones({4}), torch::ones({2, 2})).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(FlowMatchEulerTest, UnsupportedOptionsInTheConfigAreErrors) {
  auto karras = ParseFlowMatchEulerConfig(
      nlohmann::json{{"use_karras_sigmas", true}}, "scheduler_config.json");
  EXPECT_EQ(karras.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(karras.status().message(),
              HasSubstr("scheduler_config.json: \"use_karras_sigmas\""));
  auto shift = ParseFlowMatchEulerConfig(nlohmann::json{{"shift", "three"}},
                                         "scheduler_config.json");
  EXPECT_THAT(shift.status().message(), HasSubstr("\"shift\" is \"three\""));
}

TEST(FlowMatchEulerTest, AZeroShiftTerminalIsNone) {
  auto config = ParseFlowMatchEulerConfig(
      nlohmann::json{{"shift_terminal", 0.0}}, "test");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->shift_terminal.has_value());
}

TEST(FlowMatchEulerTest, NullFieldsTakeTheDefaults) {
  auto config = ParseFlowMatchEulerConfig(
      nlohmann::json{{"shift_terminal", nullptr}, {"shift", 3.0}}, "test");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->shift_terminal.has_value());
  EXPECT_EQ(config->shift, 3.0);
  EXPECT_EQ(config->num_train_timesteps, 1000);
}

}  // namespace
}  // namespace ditserve::schedulers
