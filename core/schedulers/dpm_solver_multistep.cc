#include "core/schedulers/dpm_solver_multistep.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/schedulers/ddim.h"
#include "core/schedulers/numpy_compat.h"
#include "core/schedulers/scheduler_config.h"

namespace ditserve::schedulers {
namespace {

// Diffusion-time alpha and sigma of a noise level sigma (variance preserving):
// alpha = 1 / sqrt(sigma^2 + 1), sigma_t = sigma * alpha. 0-dim float32
// tensors, so every scalar rounds as in diffusers.
struct AlphaSigma {
  at::Tensor alpha;
  at::Tensor sigma;
  at::Tensor lambda() const { return alpha.log() - sigma.log(); }
};

AlphaSigma ToAlphaSigma(const at::Tensor& sigma) {
  at::Tensor alpha = (sigma.pow(2) + 1).pow(0.5).reciprocal();
  return {alpha, sigma * alpha};
}

}  // namespace

absl::StatusOr<DpmSolverMultistepConfig> ParseDpmSolverMultistepConfig(
    const nlohmann::json& json, const std::string& source) {
  ConfigReader reader(json, source);
  DpmSolverMultistepConfig config;
  config.betas = ReadBetaSchedule(reader);
  reader.RequireBool("rescale_betas_zero_snr", false);
  config.solver_order = reader.Int("solver_order", config.solver_order);
  config.prediction_type =
      reader.Choice("prediction_type", config.prediction_type,
                    {"epsilon", "sample", "v_prediction"});
  config.solver_type =
      reader.Choice("solver_type", config.solver_type, {"midpoint", "heun"});
  config.lower_order_final =
      reader.Bool("lower_order_final", config.lower_order_final);
  config.euler_at_final = reader.Bool("euler_at_final", config.euler_at_final);
  config.timestep_spacing =
      reader.Choice("timestep_spacing", config.timestep_spacing,
                    {"linspace", "leading", "trailing"});
  config.steps_offset = reader.Int("steps_offset", config.steps_offset);
  config.final_sigmas_type = reader.Choice(
      "final_sigmas_type", config.final_sigmas_type, {"zero", "sigma_min"});
  reader.Choice("algorithm_type", "dpmsolver++", {"dpmsolver++"});
  reader.Choice("variance_type", "none", {"none"});
  const double lambda_min_clipped = reader.Number(
      "lambda_min_clipped", -std::numeric_limits<double>::infinity());
  if (!std::isinf(lambda_min_clipped) || lambda_min_clipped > 0) {
    reader.Fail("lambda_min_clipped",
                absl::StrCat("is ", lambda_min_clipped,
                             "; this implementation supports only -Infinity"));
  }
  for (const char* option :
       {"thresholding", "use_karras_sigmas", "use_exponential_sigmas",
        "use_beta_sigmas", "use_lu_lambdas", "use_flow_sigmas",
        "use_dynamic_shifting"}) {
    reader.RequireBool(option, false);
  }
  if (config.solver_order != 1 && config.solver_order != 2) {
    reader.Fail("solver_order",
                absl::StrCat("is ", config.solver_order,
                             "; this implementation supports 1 and 2"));
  }
  if (!reader.status().ok()) return reader.status();
  return config;
}

DPMSolverMultistepScheduler::DPMSolverMultistepScheduler(
    DpmSolverMultistepConfig config)
    : config_(std::move(config)),
      alphas_cumprod_(AlphasCumprod(config_.betas)),
      train_sigmas_(((1 - alphas_cumprod_) / alphas_cumprod_).pow(0.5)) {}

absl::Status DPMSolverMultistepScheduler::SetTimesteps(
    int num_inference_steps, const TimestepOptions& options) {
  const int64_t n_train = config_.betas.num_train_timesteps;
  if (num_inference_steps < 1 || num_inference_steps > n_train) {
    return absl::InvalidArgumentError(
        absl::StrCat("DPMSolverMultistepScheduler: num_inference_steps ",
                     num_inference_steps,
                     " must be between 1 and num_train_timesteps ", n_train));
  }
  if (!options.sigmas.empty()) {
    return absl::InvalidArgumentError(
        "DPMSolverMultistepScheduler takes no custom sigmas");
  }
  // With lambda_min_clipped = -inf no timestep is clipped.
  const int64_t last_timestep = n_train;
  std::vector<int64_t> steps;
  if (config_.timestep_spacing == "linspace") {
    std::vector<double> points = Linspace(
        0, static_cast<double>(last_timestep - 1), num_inference_steps + 1);
    for (int i = num_inference_steps; i >= 1; --i) {
      steps.push_back(static_cast<int64_t>(RoundHalfToEven(points[i])));
    }
  } else if (config_.timestep_spacing == "leading") {
    const int64_t ratio = last_timestep / (num_inference_steps + 1);
    for (int i = num_inference_steps; i >= 1; --i) {
      steps.push_back(i * ratio + config_.steps_offset);
    }
  } else {
    ASSIGN_OR_RETURN(steps, TrailingTimesteps(class_name(), last_timestep,
                                              n_train, num_inference_steps));
  }
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kInvalidArgument,
      absl::StrCat("DPMSolverMultistepScheduler: timesteps out of range for ",
                   num_inference_steps, " steps"),
      [&] {
        timesteps_ = torch::tensor(steps, torch::kInt64);
        at::Tensor last = config_.final_sigmas_type == "zero"
                              ? torch::zeros({1}, torch::kFloat32)
                              : ((1 - alphas_cumprod_[0]) / alphas_cumprod_[0])
                                    .pow(0.5)
                                    .view(1);
        sigmas_ = torch::cat({train_sigmas_.index_select(0, timesteps_), last});
      }));
  step_index_ = 0;
  lower_order_nums_ = 0;
  previous_x0_ = at::Tensor();
  current_x0_ = at::Tensor();
  return absl::OkStatus();
}

at::Tensor DPMSolverMultistepScheduler::ConvertModelOutput(
    const at::Tensor& model_output, const at::Tensor& sample) const {
  const AlphaSigma s = ToAlphaSigma(sigmas_[step_index_]);
  if (config_.prediction_type == "epsilon") {
    return (sample - s.sigma * model_output) / s.alpha;
  }
  if (config_.prediction_type == "sample") return model_output;
  return s.alpha * sample - s.sigma * model_output;  // v_prediction
}

at::Tensor DPMSolverMultistepScheduler::FirstOrderUpdate(
    const at::Tensor& x0, const at::Tensor& sample) const {
  const AlphaSigma t = ToAlphaSigma(sigmas_[step_index_ + 1]);
  const AlphaSigma s = ToAlphaSigma(sigmas_[step_index_]);
  const at::Tensor h = t.lambda() - s.lambda();
  return (t.sigma / s.sigma) * sample - (t.alpha * ((-h).exp() - 1.0)) * x0;
}

at::Tensor DPMSolverMultistepScheduler::SecondOrderUpdate(
    const at::Tensor& sample) const {
  const AlphaSigma t = ToAlphaSigma(sigmas_[step_index_ + 1]);
  const AlphaSigma s0 = ToAlphaSigma(sigmas_[step_index_]);
  const AlphaSigma s1 = ToAlphaSigma(sigmas_[step_index_ - 1]);
  const at::Tensor h = t.lambda() - s0.lambda();
  const at::Tensor h_0 = s0.lambda() - s1.lambda();
  const at::Tensor r0 = h_0 / h;
  const at::Tensor& d0 = current_x0_;
  const at::Tensor d1 = r0.reciprocal() * (current_x0_ - previous_x0_);
  const at::Tensor phi = t.alpha * ((-h).exp() - 1.0);
  const at::Tensor x = (t.sigma / s0.sigma) * sample - phi * d0;
  if (config_.solver_type == "midpoint") return x - 0.5 * phi * d1;
  return x + (t.alpha * (((-h).exp() - 1.0) / h + 1.0)) * d1;  // heun
}

absl::StatusOr<StepOutput> DPMSolverMultistepScheduler::Step(
    const at::Tensor& model_output, const at::Tensor& sample,
    const StepOptions& options) {
  const int n = num_steps();
  if (step_index_ >= n) {
    return absl::FailedPreconditionError(
        absl::StrCat("DPMSolverMultistepScheduler: step ", step_index_,
                     " requested but the schedule has ", n,
                     " steps (call SetTimesteps first)"));
  }
  if (options.eta != 0.0) {
    return absl::InvalidArgumentError(
        "DPMSolverMultistepScheduler (dpmsolver++) has no stochastic term "
        "(eta)");
  }
  if (model_output.sizes() != sample.sizes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("DPMSolverMultistepScheduler: model output shape ",
                     c10::str(model_output.sizes()),
                     " differs from sample shape ", c10::str(sample.sizes())));
  }
  // Lower-order steps at the end keep few-step schedules stable; a final
  // sigma of 0 always ends with a first-order step.
  const bool lower_order_final =
      step_index_ == n - 1 &&
      (config_.euler_at_final || (config_.lower_order_final && n < 15) ||
       config_.final_sigmas_type == "zero");
  StepOutput out;
  RETURN_IF_ERROR(base::Guarded(
      absl::StrCat("DPMSolverMultistepScheduler::Step ", step_index_), [&] {
        at::Tensor x0 = ConvertModelOutput(model_output, sample);
        previous_x0_ = std::move(current_x0_);
        current_x0_ = x0;
        const at::Tensor sample32 = sample.to(torch::kFloat32);
        const bool first_order = config_.solver_order == 1 ||
                                 lower_order_nums_ < 1 || lower_order_final;
        at::Tensor prev = first_order ? FirstOrderUpdate(x0, sample32)
                                      : SecondOrderUpdate(sample32);
        out.prev_sample = prev.to(model_output.scalar_type());
        out.pred_original_sample = x0;
      }));
  if (lower_order_nums_ < config_.solver_order) ++lower_order_nums_;
  ++step_index_;
  return out;
}

}  // namespace ditserve::schedulers
