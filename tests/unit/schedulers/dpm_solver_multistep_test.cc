#include "core/schedulers/dpm_solver_multistep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace ditserve::schedulers {
namespace {

using ::testing::HasSubstr;

DPMSolverMultistepScheduler Make(const nlohmann::json& json) {
  auto config = ParseDpmSolverMultistepConfig(json, "test");
  EXPECT_TRUE(config.ok()) << config.status();
  return DPMSolverMultistepScheduler(*config);
}

std::vector<int64_t> Timesteps(const Scheduler& scheduler) {
  const at::Tensor& t = scheduler.timesteps();
  return std::vector<int64_t>(t.data_ptr<int64_t>(),
                              t.data_ptr<int64_t>() + t.numel());
}

TEST(DpmSolverMultistepTest, LinspaceSpacingRoundsHalvesToEven) {
  auto scheduler = Make(nlohmann::json::object());
  ASSERT_TRUE(scheduler.SetTimesteps(4).ok());
  // linspace(0, 999, 5) = 0, 249.75, 499.5, 749.25, 999.
  EXPECT_EQ(Timesteps(scheduler), (std::vector<int64_t>{999, 749, 500, 250}));
  EXPECT_EQ(scheduler.sigmas().size(0), 5);
  EXPECT_EQ(scheduler.sigmas()[4].item<float>(), 0.0f);
}

TEST(DpmSolverMultistepTest, LeadingAndTrailingSpacing) {
  auto leading = Make({{"timestep_spacing", "leading"}, {"steps_offset", 1}});
  ASSERT_TRUE(leading.SetTimesteps(4).ok());
  EXPECT_EQ(Timesteps(leading), (std::vector<int64_t>{801, 601, 401, 201}));
  auto trailing = Make({{"timestep_spacing", "trailing"}});
  ASSERT_TRUE(trailing.SetTimesteps(4).ok());
  EXPECT_EQ(Timesteps(trailing), (std::vector<int64_t>{999, 749, 499, 249}));
  // numpy's arange, whose 19 steps end at 52 (not a 20th at -1).
  ASSERT_TRUE(trailing.SetTimesteps(19).ok());
  EXPECT_EQ(Timesteps(trailing).size(), 19u);
  EXPECT_EQ(Timesteps(trailing).back(), 52);
  EXPECT_EQ(trailing.SetTimesteps(61).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DpmSolverMultistepTest, SingleStepToSigmaZeroReturnsTheDataPrediction) {
  auto scheduler = Make(nlohmann::json::object());
  ASSERT_TRUE(scheduler.SetTimesteps(1).ok());
  at::Tensor sample = torch::randn({1, 4, 2, 2});
  at::Tensor epsilon = torch::randn({1, 4, 2, 2});
  auto out = scheduler.Step(epsilon, sample);
  ASSERT_TRUE(out.ok()) << out.status();
  // x0 = (x - sigma_t eps) / alpha_t with alpha_t = 1/sqrt(1 + s^2).
  const double s = scheduler.sigmas()[0].item<double>();
  const double alpha = 1.0 / std::sqrt(1.0 + s * s);
  at::Tensor x0 = (sample - s * alpha * epsilon) / alpha;
  EXPECT_TRUE(torch::allclose(out->prev_sample, x0, 1e-4, 1e-4));
  EXPECT_TRUE(torch::allclose(out->pred_original_sample, x0, 1e-4, 1e-4));
}

TEST(DpmSolverMultistepTest, SecondStepUsesTheHistory) {
  // With the same inputs, a first-order solver and the second-order one
  // agree on step 0 and differ on step 1 (unless the history is ignored).
  auto first_order = Make({{"solver_order", 1}});
  auto second_order = Make(nlohmann::json::object());
  ASSERT_TRUE(first_order.SetTimesteps(20).ok());
  ASSERT_TRUE(second_order.SetTimesteps(20).ok());
  at::Tensor sample = torch::randn({8});
  std::vector<at::Tensor> outputs = {torch::randn({8}), torch::randn({8})};
  at::Tensor a = sample;
  at::Tensor b = sample;
  for (int i = 0; i < 2; ++i) {
    a = first_order.Step(outputs[i], a)->prev_sample;
    b = second_order.Step(outputs[i], b)->prev_sample;
    if (i == 0) EXPECT_TRUE(torch::equal(a, b));
  }
  EXPECT_FALSE(torch::allclose(a, b));
}

TEST(DpmSolverMultistepTest, SetTimestepsResetsTheHistory) {
  auto scheduler = Make(nlohmann::json::object());
  at::Tensor sample = torch::randn({8});
  at::Tensor output = torch::randn({8});
  ASSERT_TRUE(scheduler.SetTimesteps(10).ok());
  at::Tensor first = scheduler.Step(output, sample)->prev_sample;
  ASSERT_TRUE(scheduler.Step(output, first).ok());
  ASSERT_TRUE(scheduler.SetTimesteps(10).ok());
  EXPECT_EQ(scheduler.step_index(), 0);
  EXPECT_TRUE(torch::equal(scheduler.Step(output, sample)->prev_sample, first));
}

TEST(DpmSolverMultistepTest, UnsupportedOptionsAreErrors) {
  for (const nlohmann::json& json :
       {nlohmann::json{{"algorithm_type", "sde-dpmsolver++"}},
        nlohmann::json{{"solver_order", 3}},
        nlohmann::json{{"use_karras_sigmas", true}},
        nlohmann::json{{"lambda_min_clipped", -5.1}},
        nlohmann::json{{"variance_type", "learned_range"}}}) {
    auto config = ParseDpmSolverMultistepConfig(json, "scheduler_config.json");
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
        << json.dump();
    EXPECT_THAT(config.status().message(),
                HasSubstr(json.items().begin().key()));
  }
}

TEST(DpmSolverMultistepTest, TooManyStepsIsAnError) {
  auto scheduler = Make(nlohmann::json::object());
  EXPECT_EQ(scheduler.SetTimesteps(1001).code(),
            absl::StatusCode::kInvalidArgument);
  TimestepOptions options;
  options.sigmas = {1.0};
  EXPECT_EQ(scheduler.SetTimesteps(1, options).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ditserve::schedulers
