#include <ATen/CPUGeneratorImpl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/families/cogvideox/cogvideox_ddim_scheduler.h"
#include "core/families/cogvideox/cogvideox_dpm_scheduler.h"
#include "core/families/cogvideox/cogvideox_schedule.h"

namespace ditserve::families {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// THUDM/CogVideoX-2b's scheduler_config.json; 5b differs in
// snr_shift_scale (1.0).
nlohmann::json CogVideoX2bConfig() {
  return {{"beta_end", 0.012},
          {"beta_schedule", "scaled_linear"},
          {"beta_start", 0.00085},
          {"clip_sample", false},
          {"num_train_timesteps", 1000},
          {"prediction_type", "v_prediction"},
          {"rescale_betas_zero_snr", true},
          {"set_alpha_to_one", true},
          {"snr_shift_scale", 3.0},
          {"steps_offset", 0},
          {"timestep_spacing", "trailing"}};
}

CogVideoXSchedulerConfig Parse(const nlohmann::json& json) {
  auto config = ParseCogVideoXSchedulerConfig(json, "test");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : CogVideoXSchedulerConfig();
}

std::vector<int64_t> Timesteps(const schedulers::Scheduler& scheduler) {
  const at::Tensor& t = scheduler.timesteps();
  return std::vector<int64_t>(t.data_ptr<int64_t>(),
                              t.data_ptr<int64_t>() + t.numel());
}

double At(const at::Tensor& values, int64_t index) {
  return values[index].item<double>();
}

// cumprod(1 - betas) of the scaled_linear betas, in doubles.
std::vector<double> PlainAlphasCumprod() {
  std::vector<double> alphas(1000);
  const double start = std::sqrt(0.00085);
  const double step = (std::sqrt(0.012) - start) / 999;
  double product = 1.0;
  for (int i = 0; i < 1000; ++i) {
    const double root = start + i * step;
    product *= 1.0 - root * root;
    alphas[i] = product;
  }
  return alphas;
}

TEST(CogVideoXSchedulerTest, ZeroTerminalSnrEndsAtExactlyZero) {
  CogVideoXDDIMScheduler scheduler(Parse(CogVideoX2bConfig()));
  const at::Tensor& alphas = scheduler.alphas_cumprod();
  ASSERT_EQ(alphas.scalar_type(), torch::kFloat64);
  ASSERT_EQ(alphas.size(0), 1000);
  EXPECT_EQ(At(alphas, 999), 0.0);
  // The rescale keeps the first value: the shifted, unrescaled ac[0].
  const double ac0 = PlainAlphasCumprod()[0];
  EXPECT_NEAR(At(alphas, 0), ac0 / (3.0 - 2.0 * ac0), 1e-15);
  EXPECT_GT(At(alphas, 998), 0.0);
}

TEST(CogVideoXSchedulerTest,
     SnrShiftDividesByScalePlusOneMinusScaleTimesAlpha) {
  nlohmann::json json = CogVideoX2bConfig();
  json["rescale_betas_zero_snr"] = false;
  CogVideoXDDIMScheduler shifted(Parse(json));
  json["snr_shift_scale"] = 1.0;
  CogVideoXDDIMScheduler unshifted(Parse(json));
  const std::vector<double> plain = PlainAlphasCumprod();
  for (int64_t t : {0, 250, 500, 999}) {
    const double ac = plain[t];
    EXPECT_NEAR(At(unshifted.alphas_cumprod(), t), ac, 1e-12) << t;
    EXPECT_NEAR(At(shifted.alphas_cumprod(), t), ac / (3.0 - 2.0 * ac), 1e-12)
        << t;
  }
  // The shift lowers the SNR, so every alpha gets smaller.
  EXPECT_TRUE((shifted.alphas_cumprod() < unshifted.alphas_cumprod())
                  .all()
                  .item<bool>());
}

TEST(CogVideoXSchedulerTest, TrailingTimesteps) {
  CogVideoXDDIMScheduler scheduler(Parse(CogVideoX2bConfig()));
  ASSERT_TRUE(scheduler.SetTimesteps(4).ok());
  EXPECT_EQ(Timesteps(scheduler), (std::vector<int64_t>{999, 749, 499, 249}));
  ASSERT_TRUE(scheduler.SetTimesteps(7).ok());
  EXPECT_EQ(Timesteps(scheduler),
            (std::vector<int64_t>{999, 856, 713, 570, 428, 285, 142}));
  // A count whose stride times the count is not exactly 1000 in float64.
  ASSERT_TRUE(scheduler.SetTimesteps(19).ok());
  EXPECT_EQ(Timesteps(scheduler).size(), 19u);
}

TEST(CogVideoXDdimTest, SevenStepsGoBackByTheTrainingStrideNotToTheNextStep) {
  // With "sample" prediction, model output 0 and sample 1, prev_sample is
  // a_t = sqrt((1 - ac[prev]) / (1 - ac[t])), which names the alpha used.
  nlohmann::json json = CogVideoX2bConfig();
  json["prediction_type"] = "sample";
  CogVideoXDDIMScheduler scheduler(Parse(json));
  ASSERT_TRUE(scheduler.SetTimesteps(7).ok());
  ASSERT_EQ(Timesteps(scheduler),
            (std::vector<int64_t>{999, 856, 713, 570, 428, 285, 142}));
  // t - 1000 // 7; mostly not the next listed timestep, and the last step
  // lands on ac[0] rather than on the final alpha of 1.
  const std::vector<int64_t> prev = {857, 714, 571, 428, 286, 143, 0};
  const at::Tensor& ac = scheduler.alphas_cumprod();
  const at::Tensor ones = torch::ones({3}, torch::kFloat32);
  const at::Tensor zeros = torch::zeros({3}, torch::kFloat32);
  for (int i = 0; i < 7; ++i) {
    const int64_t t = Timesteps(scheduler)[i];
    auto out = scheduler.Step(zeros, ones);
    ASSERT_TRUE(out.ok()) << out.status();
    const double expected = std::sqrt((1 - At(ac, prev[i])) / (1 - At(ac, t)));
    EXPECT_NEAR(out->prev_sample[0].item<float>(), expected, 1e-6)
        << "step " << i << " t " << t;
  }
}

TEST(CogVideoXDdimTest, VPredictionOnAHandComputedSchedule) {
  // Two training steps with betas 0.5: ac = [0.5, 0.25]; one step at t = 1.
  CogVideoXSchedulerConfig config = Parse({{"num_train_timesteps", 2},
                                           {"trained_betas", {0.5, 0.5}},
                                           {"snr_shift_scale", 1.0},
                                           {"prediction_type", "v_prediction"},
                                           {"timestep_spacing", "trailing"}});
  CogVideoXDDIMScheduler scheduler(config);
  ASSERT_TRUE(scheduler.SetTimesteps(1).ok());
  EXPECT_EQ(Timesteps(scheduler), (std::vector<int64_t>{1}));
  auto out = scheduler.Step(torch::full({2}, 1.0f), torch::full({2}, 2.0f));
  ASSERT_TRUE(out.ok()) << out.status();
  // x0 = sqrt(0.25) * 2 - sqrt(0.75) * 1.
  const double x0 = 1.0 - std::sqrt(0.75);
  EXPECT_NEAR(out->pred_original_sample[0].item<float>(), x0, 1e-7);
  // Below timestep 0 the final alpha is 1, so the step returns x0.
  EXPECT_NEAR(out->prev_sample[0].item<float>(), x0, 1e-7);
}

TEST(CogVideoXDdimTest, TerminalStepPredictsMinusV) {
  // ac[999] = 0: x0 = -v whatever the sample.
  CogVideoXDDIMScheduler scheduler(Parse(CogVideoX2bConfig()));
  ASSERT_TRUE(scheduler.SetTimesteps(4).ok());
  const at::Tensor v = torch::randn({5});
  auto out = scheduler.Step(v, torch::randn({5}) * 100);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(torch::equal(out->pred_original_sample, -v));
}

TEST(CogVideoXDdimTest, StepErrors) {
  CogVideoXDDIMScheduler scheduler(Parse(CogVideoX2bConfig()));
  auto unset = scheduler.Step(torch::zeros({2}), torch::zeros({2}));
  EXPECT_EQ(unset.status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(scheduler.SetTimesteps(2).ok());
  auto mismatch = scheduler.Step(torch::zeros({2}), torch::zeros({3}));
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler.SetTimesteps(0).code(),
            absl::StatusCode::kInvalidArgument);
}

// The generator `seed` after `draws` draws of `shape`.
at::Tensor StateAfterDraws(uint64_t seed, int draws, c10::IntArrayRef shape) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (int i = 0; i < draws; ++i) at::randn(shape, generator);
  return generator.get_state();
}

TEST(CogVideoXDpmTest, DrawsOnceInFirstOrderStepsAndTwiceInSecondOrderOnes) {
  const std::vector<int64_t> shape = {1, 3, 4, 4, 4};
  for (int steps : {4, 7}) {
    CogVideoXDPMScheduler scheduler(Parse(CogVideoX2bConfig()));
    ASSERT_TRUE(scheduler.SetTimesteps(steps).ok());
    schedulers::StepOptions options;
    options.generators = {at::make_generator<at::CPUGeneratorImpl>(1234)};
    at::Tensor sample = torch::randn(shape);
    int draws = 0;
    for (int i = 0; i < steps; ++i) {
      auto out = scheduler.Step(torch::randn(shape), sample, options);
      ASSERT_TRUE(out.ok()) << out.status();
      sample = out->prev_sample;
      // Step 0 is first order; so is a step to below timestep 0 (the last
      // step of N = 4, not of N = 7, whose last step goes to 0).
      const bool first_order = i == 0 || (steps == 4 && i == steps - 1);
      draws += first_order ? 1 : 2;
      EXPECT_TRUE(torch::equal(options.generators[0].get_state(),
                               StateAfterDraws(1234, draws, shape)))
          << steps << " steps, step " << i;
    }
    EXPECT_EQ(draws, steps == 4 ? 6 : 13);
  }
}

TEST(CogVideoXDpmTest, FirstStepAddsEachRowsFirstDrawScaled) {
  // At t = 999 (ac = 0): x0 = -v, h = inf, so prev = -mult2 * x0 +
  // sqrt(1 - ac_prev) * noise with mult2 = -sqrt(ac_prev); row i's noise is
  // the first draw of its own generator.
  CogVideoXDPMScheduler scheduler(Parse(CogVideoX2bConfig()));
  ASSERT_TRUE(scheduler.SetTimesteps(4).ok());
  schedulers::StepOptions options;
  options.generators = {at::make_generator<at::CPUGeneratorImpl>(7),
                        at::make_generator<at::CPUGeneratorImpl>(8)};
  const at::Tensor v = torch::randn({2, 8});
  auto out = scheduler.Step(v, torch::randn({2, 8}), options);
  ASSERT_TRUE(out.ok()) << out.status();
  at::Generator replay7 = at::make_generator<at::CPUGeneratorImpl>(7);
  at::Generator replay8 = at::make_generator<at::CPUGeneratorImpl>(8);
  const at::Tensor noise =
      at::cat({at::randn({1, 8}, replay7), at::randn({1, 8}, replay8)});
  const double ac_prev = At(scheduler.alphas_cumprod(), 749);
  const at::Tensor expected =
      std::sqrt(ac_prev) * -v + std::sqrt(1 - ac_prev) * noise;
  EXPECT_TRUE(torch::allclose(out->prev_sample, expected, 1e-5, 1e-6));
}

TEST(CogVideoXDpmTest, InfiniteLambdasGiveFiniteStepsAndTheLastStepIsX0) {
  CogVideoXDPMScheduler scheduler(Parse(CogVideoX2bConfig()));
  ASSERT_TRUE(scheduler.SetTimesteps(4).ok());
  schedulers::StepOptions options;
  for (uint64_t seed = 3; seed < 7; ++seed) {
    options.generators.push_back(
        at::make_generator<at::CPUGeneratorImpl>(seed));
  }
  at::Tensor sample = torch::randn({4, 4});
  for (int i = 0; i < 4; ++i) {
    auto out = scheduler.Step(torch::randn({4, 4}), sample, options);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(torch::isfinite(out->prev_sample).all().item<bool>()) << i;
    EXPECT_TRUE(torch::isfinite(out->pred_original_sample).all().item<bool>())
        << i;
    if (i == 3) {
      // Final alpha 1: no noise and no sample term.
      EXPECT_TRUE(torch::equal(out->prev_sample, out->pred_original_sample));
    }
    sample = out->prev_sample;
  }
}

TEST(CogVideoXDpmTest, MissingOrTooFewGeneratorsAreAnError) {
  CogVideoXDPMScheduler scheduler(Parse(CogVideoX2bConfig()));
  ASSERT_TRUE(scheduler.SetTimesteps(4).ok());
  auto out = scheduler.Step(torch::zeros({3}), torch::zeros({3}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("StepOptions.generators"));
  schedulers::StepOptions one;
  one.generators = {at::make_generator<at::CPUGeneratorImpl>(1)};
  out = scheduler.Step(torch::zeros({2, 3}), torch::zeros({2, 3}), one);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("per row of the sample (2)"));
  // Nothing was consumed: the step can be retried.
  EXPECT_EQ(scheduler.step_index(), 0);
}

TEST(CogVideoXSchedulerConfigTest, ReadsTheClassDefaults) {
  const CogVideoXSchedulerConfig config = Parse(nlohmann::json::object());
  EXPECT_EQ(config.betas.beta_schedule, "scaled_linear");
  EXPECT_EQ(config.betas.beta_start, 0.00085);
  EXPECT_EQ(config.betas.beta_end, 0.012);
  EXPECT_EQ(config.snr_shift_scale, 3.0);
  EXPECT_FALSE(config.rescale_betas_zero_snr);
  EXPECT_EQ(config.timestep_spacing, "leading");
  EXPECT_EQ(config.prediction_type, "epsilon");
}

TEST(CogVideoXSchedulerConfigTest, ErrorsNameTheKeyAndTheAllowedValues) {
  auto prediction =
      ParseCogVideoXSchedulerConfig({{"prediction_type", "flow"}}, "cfg.json");
  EXPECT_EQ(prediction.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(prediction.status().message(),
              AllOf(HasSubstr("cfg.json"), HasSubstr("\"prediction_type\""),
                    HasSubstr("epsilon, sample, v_prediction")));
  auto spacing =
      ParseCogVideoXSchedulerConfig({{"timestep_spacing", "karras"}}, "c");
  EXPECT_THAT(spacing.status().message(),
              AllOf(HasSubstr("\"timestep_spacing\""),
                    HasSubstr("leading, trailing, linspace")));
  auto shift = ParseCogVideoXSchedulerConfig({{"snr_shift_scale", 0}}, "c");
  EXPECT_EQ(shift.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shift.status().message(), HasSubstr("\"snr_shift_scale\""));
  auto rescale =
      ParseCogVideoXSchedulerConfig({{"rescale_betas_zero_snr", "yes"}}, "c");
  EXPECT_THAT(rescale.status().message(),
              AllOf(HasSubstr("\"rescale_betas_zero_snr\""),
                    HasSubstr("true or false")));
  auto betas =
      ParseCogVideoXSchedulerConfig({{"beta_schedule", "sigmoid"}}, "c");
  EXPECT_THAT(betas.status().message(), HasSubstr("\"beta_schedule\""));
}

}  // namespace
}  // namespace ditserve::families
