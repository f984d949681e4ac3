#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_SCHEDULE_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_SCHEDULE_H_

// What diffusers' CogVideoXDDIMScheduler and CogVideoXDPMScheduler share: the
// config (both classes take the same arguments), the noise schedule (float64
// scaled_linear betas, the SD3-style SNR shift, optional zero-terminal-SNR
// rescale), DDIM's timestep spacing, the previous-timestep rule and x0.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/schedulers/betas.h"
#include "core/schedulers/scheduler.h"
#include "nlohmann/json.hpp"

namespace ditserve::families {

struct CogVideoXSchedulerConfig {
  // The classes' own defaults, not DDPM's.
  schedulers::BetaSchedule betas = {.num_train_timesteps = 1000,
                                    .beta_start = 0.00085,
                                    .beta_end = 0.012,
                                    .beta_schedule = "scaled_linear"};
  // The "previous" alpha of the last step: 1, or alphas_cumprod[0].
  bool set_alpha_to_one = true;
  int64_t steps_offset = 0;
  // "epsilon", "sample" or "v_prediction".
  std::string prediction_type = "epsilon";
  // "leading", "trailing" or "linspace".
  std::string timestep_spacing = "leading";
  bool rescale_betas_zero_snr = false;
  // alphas_cumprod -> ac / (s + (1 - s) * ac); 1 leaves it unchanged.
  double snr_shift_scale = 3.0;
};

// Reads a scheduler_config.json object of either class (absent keys take the
// classes' defaults). clip_sample, clip_sample_range and sample_max_value are
// not read: both classes accept them and never clip.
absl::StatusOr<CogVideoXSchedulerConfig> ParseCogVideoXSchedulerConfig(
    const nlohmann::json& json, const std::string& source);

// The schedule and step bookkeeping of both classes; each adds its Step().
class CogVideoXSchedulerBase : public schedulers::Scheduler {
 public:
  // options.sigmas must be empty; options.mu is ignored.
  absl::Status SetTimesteps(
      int num_inference_steps,
      const schedulers::TimestepOptions& options = {}) override;
  const at::Tensor& timesteps() const override { return timesteps_; }
  int step_index() const override { return step_index_; }

  // float64 for scaled_linear betas (as diffusers), float32 otherwise.
  const at::Tensor& alphas_cumprod() const { return alphas_cumprod_; }
  // 0-dim: float32 1 with set_alpha_to_one, else alphas_cumprod[0].
  const at::Tensor& final_alpha_cumprod() const { return final_alpha_cumprod_; }
  const CogVideoXSchedulerConfig& config() const { return config_; }

 protected:
  explicit CogVideoXSchedulerBase(CogVideoXSchedulerConfig config);

  // OK when a step is left and the shapes agree.
  absl::Status CheckStep(const at::Tensor& model_output,
                         const at::Tensor& sample) const;
  // The timestep of step `index`.
  int64_t TimestepAt(int index) const { return timestep_values_[index]; }
  // The timestep the current step goes to: t - num_train_timesteps // N,
  // which is not the next listed timestep when N does not divide
  // num_train_timesteps.
  int64_t PrevTimestep() const;
  // 0-dim alphas_cumprod at `timestep`, or the final alpha below 0.
  at::Tensor AlphaProd(int64_t timestep) const;
  // x0 from the model output at a timestep with alphas_cumprod
  // `alpha_prod_t`, per prediction_type.
  at::Tensor PredOriginalSample(const at::Tensor& model_output,
                                const at::Tensor& sample,
                                const at::Tensor& alpha_prod_t) const;
  void AdvanceStep() { ++step_index_; }

 private:
  CogVideoXSchedulerConfig config_;
  at::Tensor alphas_cumprod_;
  at::Tensor final_alpha_cumprod_;
  at::Tensor timesteps_;
  std::vector<int64_t> timestep_values_;
  int step_index_ = 0;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_SCHEDULE_H_
