#ifndef DITSERVE_CORE_SCHEDULERS_DDIM_H_
#define DITSERVE_CORE_SCHEDULERS_DDIM_H_

// diffusers' DDIMScheduler: deterministic (eta 0) or stochastic DDIM steps on
// a DDPM beta schedule, with leading / trailing / linspace spacing.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/schedulers/betas.h"
#include "core/schedulers/scheduler.h"
#include "nlohmann/json.hpp"

namespace ditserve::schedulers {

struct DdimConfig {
  BetaSchedule betas;
  bool clip_sample = true;
  double clip_sample_range = 1.0;
  // The "previous" alpha of the last step: 1, or alphas_cumprod[0].
  bool set_alpha_to_one = true;
  int64_t steps_offset = 0;
  // "epsilon", "sample" or "v_prediction".
  std::string prediction_type = "epsilon";
  // "leading", "trailing" or "linspace".
  std::string timestep_spacing = "leading";
};

// Reads a scheduler_config.json object (DDIM's own defaults for absent keys,
// so a PixArt / SD config converted with from_config reads as diffusers reads
// it); thresholding and zero-SNR rescaling are errors.
absl::StatusOr<DdimConfig> ParseDdimConfig(const nlohmann::json& json,
                                           const std::string& source);

// diffusers' "trailing" spacing from `start` (num_train_timesteps, or DPM's
// last timestep): np.round(np.arange(start, 0, -num_train_timesteps /
// num_inference_steps)) - 1. For some counts (61, 103, 121, ... of 1000)
// numpy yields one timestep more, -1, which diffusers would use to index
// alphas_cumprod[-1], the last training step: INVALID_ARGUMENT naming
// num_inference_steps, starting with `scheduler`.
absl::StatusOr<std::vector<int64_t>> TrailingTimesteps(
    absl::string_view scheduler, int64_t start, int64_t num_train_timesteps,
    int num_inference_steps);

// DDIMScheduler.set_timesteps, which the CogVideoX schedulers share:
// `spacing` is "leading", "trailing" or "linspace"; `steps_offset` applies to
// leading. Errors (a step count outside 1..num_train_timesteps, a timestep
// outside 0..num_train_timesteps-1) start with `scheduler`.
absl::StatusOr<std::vector<int64_t>> DdimTimesteps(absl::string_view scheduler,
                                                   int64_t num_train_timesteps,
                                                   int num_inference_steps,
                                                   absl::string_view spacing,
                                                   int64_t steps_offset);

class DDIMScheduler : public Scheduler {
 public:
  explicit DDIMScheduler(DdimConfig config);

  absl::string_view class_name() const override { return "DDIMScheduler"; }
  // options.sigmas must be empty; options.mu is ignored.
  absl::Status SetTimesteps(int num_inference_steps,
                            const TimestepOptions& options = {}) override;
  const at::Tensor& timesteps() const override { return timesteps_; }
  int step_index() const override { return step_index_; }
  // With options.eta > 0, options.variance_noise is required.
  absl::StatusOr<StepOutput> Step(const at::Tensor& model_output,
                                  const at::Tensor& sample,
                                  const StepOptions& options = {}) override;

  const at::Tensor& alphas_cumprod() const { return alphas_cumprod_; }
  const DdimConfig& config() const { return config_; }

 private:
  // alphas_cumprod at `timestep`, or the final alpha below timestep 0.
  at::Tensor AlphaProd(int64_t timestep) const;

  DdimConfig config_;
  at::Tensor alphas_cumprod_;
  at::Tensor final_alpha_cumprod_;
  at::Tensor timesteps_;
  std::vector<int64_t> timestep_values_;
  int step_index_ = 0;
};

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_DDIM_H_
