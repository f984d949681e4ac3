#include "core/schedulers/flow_match_euler.h"

#include <torch/torch.h>

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/schedulers/numpy_compat.h"
#include "core/schedulers/scheduler_config.h"

namespace ditserve::schedulers {
namespace {

// shift * s / (1 + (shift - 1) * s) in the dtype of `sigmas`, with the
// operation order of diffusers (numpy float64 or float32, or torch float32).
at::Tensor StaticShift(const at::Tensor& sigmas, double shift) {
  return sigmas * shift / ((shift - 1.0) * sigmas + 1.0);
}

}  // namespace

absl::StatusOr<FlowMatchEulerConfig> ParseFlowMatchEulerConfig(
    const nlohmann::json& json, const std::string& source) {
  ConfigReader reader(json, source);
  FlowMatchEulerConfig config;
  config.num_train_timesteps =
      reader.Int("num_train_timesteps", config.num_train_timesteps);
  config.shift = reader.Number("shift", config.shift);
  config.use_dynamic_shifting =
      reader.Bool("use_dynamic_shifting", config.use_dynamic_shifting);
  config.base_shift = reader.Number("base_shift", config.base_shift);
  config.max_shift = reader.Number("max_shift", config.max_shift);
  config.base_image_seq_len =
      reader.Int("base_image_seq_len", config.base_image_seq_len);
  config.max_image_seq_len =
      reader.Int("max_image_seq_len", config.max_image_seq_len);
  config.time_shift_type = reader.Choice(
      "time_shift_type", config.time_shift_type, {"exponential", "linear"});
  config.shift_terminal = reader.OptionalNumber("shift_terminal");
  // diffusers tests `if self.config.shift_terminal:`, so 0 stretches nothing.
  if (config.shift_terminal == 0.0) config.shift_terminal.reset();
  config.invert_sigmas = reader.Bool("invert_sigmas", config.invert_sigmas);
  reader.RequireBool("use_karras_sigmas", false);
  reader.RequireBool("use_exponential_sigmas", false);
  reader.RequireBool("use_beta_sigmas", false);
  reader.RequireBool("stochastic_sampling", false);
  if (config.num_train_timesteps < 1) {
    reader.Fail("num_train_timesteps",
                absl::StrCat("is ", config.num_train_timesteps,
                             "; expected at least 1"));
  }
  if (config.shift <= 0) {
    reader.Fail("shift",
                absl::StrCat("is ", config.shift, "; expected more than 0"));
  }
  if (config.max_image_seq_len == config.base_image_seq_len) {
    reader.Fail(
        "max_image_seq_len",
        absl::StrCat("equals base_image_seq_len ", config.base_image_seq_len,
                     "; calculate_shift needs two different lengths"));
  }
  if (config.shift_terminal.has_value() && *config.shift_terminal >= 1.0) {
    reader.Fail("shift_terminal", absl::StrCat("is ", *config.shift_terminal,
                                               "; expected less than 1"));
  }
  if (!reader.status().ok()) return reader.status();
  return config;
}

double CalculateShift(int64_t image_seq_len,
                      const FlowMatchEulerConfig& config) {
  const double m =
      (config.max_shift - config.base_shift) /
      static_cast<double>(config.max_image_seq_len - config.base_image_seq_len);
  const double b =
      config.base_shift - m * static_cast<double>(config.base_image_seq_len);
  return static_cast<double>(image_seq_len) * m + b;
}

FlowMatchEulerDiscreteScheduler::FlowMatchEulerDiscreteScheduler(
    FlowMatchEulerConfig config)
    : config_(std::move(config)) {
  // The training schedule: timesteps N..1 (exact in float32), sigmas t / N,
  // statically shifted in float32 unless the shift is dynamic.
  const int64_t n = config_.num_train_timesteps;
  at::Tensor sigmas =
      torch::arange(n, 0, -1, torch::kFloat32) / static_cast<double>(n);
  if (!config_.use_dynamic_shifting)
    sigmas = StaticShift(sigmas, config_.shift);
  sigma_max_ = sigmas[0].item<double>();
  sigma_min_ = sigmas[-1].item<double>();
}

absl::Status FlowMatchEulerDiscreteScheduler::SetTimesteps(
    int num_inference_steps, const TimestepOptions& options) {
  if (num_inference_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_inference_steps ", num_inference_steps, " must be at least 1"));
  }
  if (!options.sigmas.empty() &&
      options.sigmas.size() != static_cast<size_t>(num_inference_steps)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FlowMatchEulerDiscreteScheduler: ", options.sigmas.size(),
        " sigmas given for num_inference_steps ", num_inference_steps));
  }
  if (config_.use_dynamic_shifting && !options.mu.has_value()) {
    return absl::InvalidArgumentError(
        "FlowMatchEulerDiscreteScheduler: use_dynamic_shifting needs mu "
        "(CalculateShift of the image sequence length)");
  }
  const double n_train = static_cast<double>(config_.num_train_timesteps);
  RETURN_IF_ERROR(
      base::Guarded("FlowMatchEulerDiscreteScheduler::SetTimesteps", [&] {
        // diffusers builds the schedule in numpy: float64 when it spaces the
        // timesteps itself, float32 when the pipeline passes sigmas.
        at::Tensor sigmas;
        if (options.sigmas.empty()) {
          std::vector<double> steps = Linspace(
              sigma_max_ * n_train, sigma_min_ * n_train, num_inference_steps);
          sigmas = torch::tensor(steps, torch::kFloat64) / n_train;
        } else {
          sigmas = torch::tensor(options.sigmas, torch::kFloat64)
                       .to(torch::kFloat32);
        }
        if (config_.use_dynamic_shifting) {
          // time_shift(mu, 1.0, t) with sigma exponent 1: (1/t - 1) ** 1.0.
          const double mu = *options.mu;
          const double shift =
              config_.time_shift_type == "exponential" ? std::exp(mu) : mu;
          // A true division, like numpy; `scalar / tensor` would multiply by
          // the reciprocal and round differently.
          at::Tensor numerator =
              torch::scalar_tensor(shift, sigmas.options()).expand_as(sigmas);
          sigmas = numerator / ((1.0 / sigmas - 1.0) + shift);
        } else {
          sigmas = StaticShift(sigmas, config_.shift);
        }
        if (config_.shift_terminal.has_value()) {
          at::Tensor one_minus_z = 1.0 - sigmas;
          at::Tensor scale_factor =
              one_minus_z[-1] / (1.0 - *config_.shift_terminal);
          sigmas = 1.0 - one_minus_z / scale_factor;
        }
        sigmas = sigmas.to(torch::kFloat32);
        at::Tensor terminal = torch::zeros({1}, torch::kFloat32);
        if (config_.invert_sigmas) {
          sigmas = 1.0 - sigmas;
          terminal = torch::ones({1}, torch::kFloat32);
        }
        timesteps_ = sigmas * n_train;
        sigmas_ = torch::cat({sigmas, terminal});
      }));
  step_index_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<StepOutput> FlowMatchEulerDiscreteScheduler::Step(
    const at::Tensor& model_output, const at::Tensor& sample,
    const StepOptions& options) {
  if (step_index_ >= num_steps()) {
    return absl::FailedPreconditionError(
        absl::StrCat("FlowMatchEulerDiscreteScheduler: step ", step_index_,
                     " requested but the schedule has ", num_steps(),
                     " steps (call SetTimesteps first)"));
  }
  if (options.eta != 0.0) {
    return absl::InvalidArgumentError(
        "FlowMatchEulerDiscreteScheduler has no stochastic term (eta)");
  }
  if (model_output.sizes() != sample.sizes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("FlowMatchEulerDiscreteScheduler: model output shape ",
                     c10::str(model_output.sizes()),
                     " differs from sample shape ", c10::str(sample.sizes())));
  }
  StepOutput out;
  RETURN_IF_ERROR(base::Guarded(
      absl::StrCat("FlowMatchEulerDiscreteScheduler::Step ", step_index_), [&] {
        const float sigma = sigmas_[step_index_].item<float>();
        const float sigma_next = sigmas_[step_index_ + 1].item<float>();
        const float dt = sigma_next - sigma;
        const at::Tensor sample32 = sample.to(torch::kFloat32);
        out.prev_sample =
            (sample32 + dt * model_output).to(model_output.scalar_type());
        // The sample is (1 − σ) × x0 + σ × noise and the model predicts the
        // velocity noise − x0, so x0 is the sample less σ velocities.
        out.pred_original_sample =
            (sample32 - sigma * model_output).to(model_output.scalar_type());
      }));
  ++step_index_;
  return out;
}

}  // namespace ditserve::schedulers
