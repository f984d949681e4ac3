#include "core/schedulers/ddim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace ditserve::schedulers {
namespace {

using ::testing::HasSubstr;

DDIMScheduler Make(const nlohmann::json& json) {
  auto config = ParseDdimConfig(json, "test");
  EXPECT_TRUE(config.ok()) << config.status();
  return DDIMScheduler(*config);
}

std::vector<int64_t> Timesteps(const Scheduler& scheduler) {
  const at::Tensor& t = scheduler.timesteps();
  return std::vector<int64_t>(t.data_ptr<int64_t>(),
                              t.data_ptr<int64_t>() + t.numel());
}

TEST(DdimTest, TimestepSpacings) {
  auto leading = Make({{"steps_offset", 1}});
  ASSERT_TRUE(leading.SetTimesteps(4).ok());
  EXPECT_EQ(Timesteps(leading), (std::vector<int64_t>{751, 501, 251, 1}));
  auto trailing = Make({{"timestep_spacing", "trailing"}});
  ASSERT_TRUE(trailing.SetTimesteps(4).ok());
  EXPECT_EQ(Timesteps(trailing), (std::vector<int64_t>{999, 749, 499, 249}));
  auto linspace = Make({{"timestep_spacing", "linspace"}});
  ASSERT_TRUE(linspace.SetTimesteps(4).ok());
  EXPECT_EQ(Timesteps(linspace), (std::vector<int64_t>{999, 666, 333, 0}));
}

// The values of np.round(np.arange(1000, 0, -1000 / n)) - 1 (numpy 1.24).
// Counting down by 1000 / n instead gives 19 a 20th timestep, -1, and 48
// timesteps 937, 687, 437 and 187 where numpy has 936, 686, 436 and 186.
TEST(DdimTest, TrailingSpacingIsNumpysArange) {
  auto trailing = Make({{"timestep_spacing", "trailing"}});
  ASSERT_TRUE(trailing.SetTimesteps(19).ok());
  EXPECT_EQ(
      Timesteps(trailing),
      (std::vector<int64_t>{999, 946, 894, 841, 788, 736, 683, 631, 578, 525,
                            473, 420, 367, 315, 262, 210, 157, 104, 52}));
  ASSERT_TRUE(trailing.SetTimesteps(48).ok());
  const std::vector<int64_t> steps = Timesteps(trailing);
  ASSERT_EQ(steps.size(), 48u);
  EXPECT_EQ((std::vector<int64_t>{steps[3], steps[15], steps[27], steps[39]}),
            (std::vector<int64_t>{936, 686, 436, 186}));
}

TEST(DdimTest, TrailingCountsWhoseArangeEndsAtMinusOneAreRefused) {
  auto trailing = Make({{"timestep_spacing", "trailing"}});
  absl::Status status = trailing.SetTimesteps(61);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("num_inference_steps 61 with trailing timestep "
                        "spacing gives 62 timesteps, the last -1"));
  // 121 and 122 both fail too (Freeze names the nearest counts that work,
  // within the server's limit).
  EXPECT_EQ(trailing.SetTimesteps(121).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(trailing.SetTimesteps(122).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(trailing.SetTimesteps(123).ok());
}

TEST(DdimTest, OffsetPastTheLastTrainingStepIsAnError) {
  auto shifted = Make({{"steps_offset", 300}});
  absl::Status status = shifted.SetTimesteps(4);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("steps_offset 300"));
}

TEST(DdimTest, LastStepWithAlphaOneReturnsTheCleanPrediction) {
  // set_alpha_to_one: the step below timestep 0 has alpha 1, so prev_sample
  // is pred_original_sample.
  auto scheduler = Make({{"clip_sample", false}});
  ASSERT_TRUE(scheduler.SetTimesteps(1).ok());
  at::Tensor sample = torch::randn({6});
  auto out = scheduler.Step(torch::randn({6}), sample);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(
      torch::allclose(out->prev_sample, out->pred_original_sample, 1e-5, 1e-5));
}

TEST(DdimTest, ClipSampleClampsThePrediction) {
  auto scheduler = Make({{"clip_sample", true}, {"clip_sample_range", 0.5}});
  ASSERT_TRUE(scheduler.SetTimesteps(2).ok());
  auto out = scheduler.Step(torch::full({4}, 10.0f), torch::full({4}, -10.0f));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_LE(out->pred_original_sample.abs().max().item<float>(), 0.5f);
}

TEST(DdimTest, PositiveEtaNeedsVarianceNoise) {
  auto scheduler = Make(nlohmann::json::object());
  ASSERT_TRUE(scheduler.SetTimesteps(4).ok());
  StepOptions options;
  options.eta = 1.0;
  auto out = scheduler.Step(torch::zeros({3}), torch::zeros({3}), options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("variance_noise"));
}

TEST(DdimTest, EtaScalesTheGivenNoise) {
  auto deterministic = Make(nlohmann::json::object());
  auto stochastic = Make(nlohmann::json::object());
  ASSERT_TRUE(deterministic.SetTimesteps(4).ok());
  ASSERT_TRUE(stochastic.SetTimesteps(4).ok());
  at::Tensor sample = torch::randn({5});
  at::Tensor eps = torch::randn({5});
  StepOptions noisy;
  noisy.eta = 1.0;
  noisy.variance_noise = torch::randn({5});
  at::Tensor a = deterministic.Step(eps, sample)->prev_sample;
  at::Tensor b = stochastic.Step(eps, sample, noisy)->prev_sample;
  EXPECT_FALSE(torch::allclose(a, b));
}

TEST(DdimTest, UnsupportedOptionsAreErrors) {
  EXPECT_EQ(ParseDdimConfig({{"thresholding", true}}, "c").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ParseDdimConfig({{"rescale_betas_zero_snr", true}}, "c").status().code(),
      absl::StatusCode::kInvalidArgument);
  auto schedule = ParseDdimConfig({{"beta_schedule", "sigmoid"}}, "c");
  EXPECT_THAT(schedule.status().message(), HasSubstr("\"beta_schedule\""));
}

TEST(DdimTest, BetaSchedulesGiveDecreasingAlphas) {
  for (const char* schedule :
       {"linear", "scaled_linear", "squaredcos_cap_v2"}) {
    auto scheduler = Make({{"beta_schedule", schedule}});
    const at::Tensor& alphas = scheduler.alphas_cumprod();
    ASSERT_EQ(alphas.size(0), 1000) << schedule;
    EXPECT_TRUE(
        (alphas.slice(0, 1) < alphas.slice(0, 0, -1)).all().item<bool>())
        << schedule;
  }
}

TEST(DdimTest, TrainedBetasOverrideTheSchedule) {
  auto scheduler = Make({{"num_train_timesteps", 2},
                         {"trained_betas", {0.5, 0.5}},
                         {"steps_offset", 0}});
  EXPECT_TRUE(torch::allclose(scheduler.alphas_cumprod(),
                              torch::tensor({0.5f, 0.25f})));
  EXPECT_EQ(ParseDdimConfig({{"trained_betas", {0.5}}}, "c").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ditserve::schedulers
