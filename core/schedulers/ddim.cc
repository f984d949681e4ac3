#include "core/schedulers/ddim.h"

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/schedulers/numpy_compat.h"
#include "core/schedulers/scheduler_config.h"

namespace ditserve::schedulers {

absl::StatusOr<DdimConfig> ParseDdimConfig(const nlohmann::json& json,
                                           const std::string& source) {
  ConfigReader reader(json, source);
  DdimConfig config;
  config.betas = ReadBetaSchedule(reader);
  reader.RequireBool("rescale_betas_zero_snr", false);
  config.clip_sample = reader.Bool("clip_sample", config.clip_sample);
  config.clip_sample_range =
      reader.Number("clip_sample_range", config.clip_sample_range);
  config.set_alpha_to_one =
      reader.Bool("set_alpha_to_one", config.set_alpha_to_one);
  config.steps_offset = reader.Int("steps_offset", config.steps_offset);
  config.prediction_type =
      reader.Choice("prediction_type", config.prediction_type,
                    {"epsilon", "sample", "v_prediction"});
  config.timestep_spacing =
      reader.Choice("timestep_spacing", config.timestep_spacing,
                    {"leading", "trailing", "linspace"});
  reader.RequireBool("thresholding", false);
  if (!reader.status().ok()) return reader.status();
  return config;
}

DDIMScheduler::DDIMScheduler(DdimConfig config)
    : config_(std::move(config)),
      alphas_cumprod_(AlphasCumprod(config_.betas)),
      final_alpha_cumprod_(config_.set_alpha_to_one
                               ? torch::scalar_tensor(1.0, torch::kFloat32)
                               : alphas_cumprod_[0]) {}

namespace {

// np.round(np.arange(start, 0, -num_train_timesteps / steps)) - 1.
std::vector<int64_t> TrailingSpacing(int64_t start, int64_t num_train_timesteps,
                                     int steps) {
  std::vector<int64_t> timesteps;
  for (double point :
       Arange(static_cast<double>(start), 0,
              -static_cast<double>(num_train_timesteps) / steps)) {
    timesteps.push_back(static_cast<int64_t>(RoundHalfToEven(point)) - 1);
  }
  return timesteps;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> TrailingTimesteps(
    absl::string_view scheduler, int64_t start, int64_t num_train_timesteps,
    int num_inference_steps) {
  std::vector<int64_t> steps =
      TrailingSpacing(start, num_train_timesteps, num_inference_steps);
  if (steps.empty() || steps.back() >= 0) return steps;
  return absl::InvalidArgumentError(absl::StrCat(
      scheduler, ": num_inference_steps ", num_inference_steps,
      " with trailing timestep spacing gives ", steps.size(),
      " timesteps, the last -1 (numpy's arange rounding), outside 0..",
      num_train_timesteps - 1));
}

absl::StatusOr<std::vector<int64_t>> DdimTimesteps(absl::string_view scheduler,
                                                   int64_t num_train_timesteps,
                                                   int num_inference_steps,
                                                   absl::string_view spacing,
                                                   int64_t steps_offset) {
  if (num_inference_steps < 1 || num_inference_steps > num_train_timesteps) {
    return absl::InvalidArgumentError(absl::StrCat(
        scheduler, ": num_inference_steps ", num_inference_steps,
        " must be between 1 and num_train_timesteps ", num_train_timesteps));
  }
  std::vector<int64_t> steps;
  if (spacing == "linspace") {
    std::vector<double> points = Linspace(
        0, static_cast<double>(num_train_timesteps - 1), num_inference_steps);
    for (int i = num_inference_steps - 1; i >= 0; --i) {
      steps.push_back(static_cast<int64_t>(RoundHalfToEven(points[i])));
    }
  } else if (spacing == "leading") {
    const int64_t ratio = num_train_timesteps / num_inference_steps;
    for (int i = num_inference_steps - 1; i >= 0; --i) {
      steps.push_back(i * ratio + steps_offset);
    }
  } else {
    ASSIGN_OR_RETURN(
        steps, TrailingTimesteps(scheduler, num_train_timesteps,
                                 num_train_timesteps, num_inference_steps));
  }
  for (int64_t t : steps) {
    if (t < 0 || t >= num_train_timesteps) {
      return absl::InvalidArgumentError(
          absl::StrCat(scheduler, ": timestep ", t, " (steps_offset ",
                       steps_offset, ", ", num_inference_steps,
                       " steps) is outside 0..", num_train_timesteps - 1));
    }
  }
  return steps;
}

absl::Status DDIMScheduler::SetTimesteps(int num_inference_steps,
                                         const TimestepOptions& options) {
  if (!options.sigmas.empty()) {
    return absl::InvalidArgumentError("DDIMScheduler takes no custom sigmas");
  }
  ASSIGN_OR_RETURN(
      timestep_values_,
      DdimTimesteps(class_name(), config_.betas.num_train_timesteps,
                    num_inference_steps, config_.timestep_spacing,
                    config_.steps_offset));
  timesteps_ = torch::tensor(timestep_values_, torch::kInt64);
  step_index_ = 0;
  return absl::OkStatus();
}

at::Tensor DDIMScheduler::AlphaProd(int64_t timestep) const {
  return timestep >= 0 ? alphas_cumprod_[timestep] : final_alpha_cumprod_;
}

absl::StatusOr<StepOutput> DDIMScheduler::Step(const at::Tensor& model_output,
                                               const at::Tensor& sample,
                                               const StepOptions& options) {
  if (step_index_ >= num_steps()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "DDIMScheduler: step ", step_index_, " requested but the schedule has ",
        num_steps(), " steps (call SetTimesteps first)"));
  }
  if (model_output.sizes() != sample.sizes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DDIMScheduler: model output shape ", c10::str(model_output.sizes()),
        " differs from sample shape ", c10::str(sample.sizes())));
  }
  if (options.eta < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("DDIMScheduler: eta ", options.eta, " must be >= 0"));
  }
  if (options.eta > 0 && (!options.variance_noise.defined() ||
                          options.variance_noise.sizes() != sample.sizes())) {
    return absl::InvalidArgumentError(
        absl::StrCat("DDIMScheduler: eta ", options.eta,
                     " needs variance_noise shaped like the sample ",
                     c10::str(sample.sizes())));
  }
  // diffusers steps back by the training stride, whatever the spacing.
  const int64_t timestep = timestep_values_[step_index_];
  const int64_t prev_timestep =
      timestep - config_.betas.num_train_timesteps / num_steps();
  StepOutput out;
  RETURN_IF_ERROR(
      base::Guarded(absl::StrCat("DDIMScheduler::Step ", step_index_), [&] {
        const at::Tensor alpha_prod_t = AlphaProd(timestep);
        const at::Tensor alpha_prod_t_prev = AlphaProd(prev_timestep);
        const at::Tensor beta_prod_t = 1 - alpha_prod_t;
        at::Tensor pred_original_sample;
        at::Tensor pred_epsilon;
        if (config_.prediction_type == "epsilon") {
          pred_original_sample =
              (sample - beta_prod_t.pow(0.5) * model_output) /
              alpha_prod_t.pow(0.5);
          pred_epsilon = model_output;
        } else if (config_.prediction_type == "sample") {
          pred_original_sample = model_output;
          pred_epsilon =
              (sample - alpha_prod_t.pow(0.5) * pred_original_sample) /
              beta_prod_t.pow(0.5);
        } else {  // v_prediction
          pred_original_sample = alpha_prod_t.pow(0.5) * sample -
                                 beta_prod_t.pow(0.5) * model_output;
          pred_epsilon = alpha_prod_t.pow(0.5) * model_output +
                         beta_prod_t.pow(0.5) * sample;
        }
        if (config_.clip_sample) {
          pred_original_sample = pred_original_sample.clamp(
              -config_.clip_sample_range, config_.clip_sample_range);
        }
        const at::Tensor beta_prod_t_prev = 1 - alpha_prod_t_prev;
        const at::Tensor variance = (beta_prod_t_prev / beta_prod_t) *
                                    (1 - alpha_prod_t / alpha_prod_t_prev);
        const at::Tensor std_dev_t = options.eta * variance.pow(0.5);
        const at::Tensor direction =
            (1 - alpha_prod_t_prev - std_dev_t.pow(2)).pow(0.5) * pred_epsilon;
        at::Tensor prev =
            alpha_prod_t_prev.pow(0.5) * pred_original_sample + direction;
        if (options.eta > 0) prev = prev + std_dev_t * options.variance_noise;
        out.prev_sample = prev;
        out.pred_original_sample = pred_original_sample;
      }));
  ++step_index_;
  return out;
}

}  // namespace ditserve::schedulers
