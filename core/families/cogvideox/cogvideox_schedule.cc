#include "core/families/cogvideox/cogvideox_schedule.h"

#include <torch/torch.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/schedulers/ddim.h"
#include "core/schedulers/scheduler_config.h"

namespace ditserve::families {
namespace {

// Every op in the order diffusers runs it, so each element rounds the same.
at::Tensor AlphasCumprod(const CogVideoXSchedulerConfig& config) {
  at::Tensor alphas_cumprod =
      schedulers::AlphasCumprod(config.betas, torch::kFloat64);
  const double shift = config.snr_shift_scale;
  alphas_cumprod = alphas_cumprod / (shift + (1 - shift) * alphas_cumprod);
  if (config.rescale_betas_zero_snr) {
    // Lin et al. 2023, Algorithm 1, on sqrt(alphas_cumprod) directly: the
    // last entry becomes exactly 0, the first keeps its value.
    at::Tensor sqrt_alphas = alphas_cumprod.sqrt();
    const at::Tensor first = sqrt_alphas[0].clone();
    const at::Tensor last = sqrt_alphas[-1].clone();
    sqrt_alphas = (sqrt_alphas - last) * (first / (first - last));
    alphas_cumprod = sqrt_alphas.pow(2);
  }
  return alphas_cumprod;
}

}  // namespace

absl::StatusOr<CogVideoXSchedulerConfig> ParseCogVideoXSchedulerConfig(
    const nlohmann::json& json, const std::string& source) {
  schedulers::ConfigReader reader(json, source);
  CogVideoXSchedulerConfig config;
  config.betas = schedulers::ReadBetaSchedule(reader, config.betas);
  config.set_alpha_to_one =
      reader.Bool("set_alpha_to_one", config.set_alpha_to_one);
  config.steps_offset = reader.Int("steps_offset", config.steps_offset);
  config.prediction_type =
      reader.Choice("prediction_type", config.prediction_type,
                    {"epsilon", "sample", "v_prediction"});
  config.timestep_spacing =
      reader.Choice("timestep_spacing", config.timestep_spacing,
                    {"leading", "trailing", "linspace"});
  config.rescale_betas_zero_snr =
      reader.Bool("rescale_betas_zero_snr", config.rescale_betas_zero_snr);
  config.snr_shift_scale =
      reader.Number("snr_shift_scale", config.snr_shift_scale);
  if (!(config.snr_shift_scale > 0)) {
    reader.Fail("snr_shift_scale", absl::StrCat("is ", config.snr_shift_scale,
                                                "; expected a number > 0"));
  }
  if (!reader.status().ok()) return reader.status();
  return config;
}

CogVideoXSchedulerBase::CogVideoXSchedulerBase(CogVideoXSchedulerConfig config)
    : config_(std::move(config)),
      alphas_cumprod_(AlphasCumprod(config_)),
      final_alpha_cumprod_(config_.set_alpha_to_one
                               ? torch::scalar_tensor(1.0, torch::kFloat32)
                               : alphas_cumprod_[0]) {}

absl::Status CogVideoXSchedulerBase::SetTimesteps(
    int num_inference_steps, const schedulers::TimestepOptions& options) {
  if (!options.sigmas.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(class_name(), " takes no custom sigmas"));
  }
  ASSIGN_OR_RETURN(
      timestep_values_,
      schedulers::DdimTimesteps(class_name(), config_.betas.num_train_timesteps,
                                num_inference_steps, config_.timestep_spacing,
                                config_.steps_offset));
  timesteps_ = torch::tensor(timestep_values_, torch::kInt64);
  step_index_ = 0;
  return absl::OkStatus();
}

absl::Status CogVideoXSchedulerBase::CheckStep(const at::Tensor& model_output,
                                               const at::Tensor& sample) const {
  if (step_index_ >= num_steps()) {
    return absl::FailedPreconditionError(
        absl::StrCat(class_name(), ": step ", step_index_,
                     " requested but the schedule has ", num_steps(),
                     " steps (call SetTimesteps first)"));
  }
  if (model_output.sizes() != sample.sizes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        class_name(), ": model output shape ", c10::str(model_output.sizes()),
        " differs from sample shape ", c10::str(sample.sizes())));
  }
  return absl::OkStatus();
}

int64_t CogVideoXSchedulerBase::PrevTimestep() const {
  return TimestepAt(step_index_) -
         config_.betas.num_train_timesteps / num_steps();
}

at::Tensor CogVideoXSchedulerBase::AlphaProd(int64_t timestep) const {
  return timestep >= 0 ? alphas_cumprod_[timestep] : final_alpha_cumprod_;
}

at::Tensor CogVideoXSchedulerBase::PredOriginalSample(
    const at::Tensor& model_output, const at::Tensor& sample,
    const at::Tensor& alpha_prod_t) const {
  const at::Tensor beta_prod_t = 1 - alpha_prod_t;
  if (config_.prediction_type == "epsilon") {
    return (sample - beta_prod_t.pow(0.5) * model_output) /
           alpha_prod_t.pow(0.5);
  }
  if (config_.prediction_type == "sample") return model_output;
  // v_prediction.
  return alpha_prod_t.pow(0.5) * sample - beta_prod_t.pow(0.5) * model_output;
}

}  // namespace ditserve::families
