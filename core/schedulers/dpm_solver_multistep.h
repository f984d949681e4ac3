#ifndef DITSERVE_CORE_SCHEDULERS_DPM_SOLVER_MULTISTEP_H_
#define DITSERVE_CORE_SCHEDULERS_DPM_SOLVER_MULTISTEP_H_

// diffusers' DPMSolverMultistepScheduler in the configuration PixArt ships:
// DPM-Solver++ (data prediction), order 1 or 2 (midpoint or heun), first
// order on the first step and, with lower_order_final, near the end.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/schedulers/betas.h"
#include "core/schedulers/scheduler.h"
#include "nlohmann/json.hpp"

namespace ditserve::schedulers {

struct DpmSolverMultistepConfig {
  BetaSchedule betas;
  int64_t solver_order = 2;  // 1 or 2.
  // "epsilon", "sample" or "v_prediction".
  std::string prediction_type = "epsilon";
  // "midpoint" or "heun".
  std::string solver_type = "midpoint";
  bool lower_order_final = true;
  bool euler_at_final = false;
  // "linspace", "leading" or "trailing".
  std::string timestep_spacing = "linspace";
  int64_t steps_offset = 0;
  // "zero" or "sigma_min".
  std::string final_sigmas_type = "zero";
};

// Reads a scheduler_config.json object. Options this implementation does not
// have (other algorithm types, order 3, thresholding, karras / exponential /
// beta / flow / lu-lambda sigmas, learned variance, clipped lambda) are
// errors rather than silently different schedules.
absl::StatusOr<DpmSolverMultistepConfig> ParseDpmSolverMultistepConfig(
    const nlohmann::json& json, const std::string& source);

class DPMSolverMultistepScheduler : public Scheduler {
 public:
  explicit DPMSolverMultistepScheduler(DpmSolverMultistepConfig config);

  absl::string_view class_name() const override {
    return "DPMSolverMultistepScheduler";
  }
  // options.sigmas must be empty; options.mu is ignored.
  absl::Status SetTimesteps(int num_inference_steps,
                            const TimestepOptions& options = {}) override;
  const at::Tensor& timesteps() const override { return timesteps_; }
  int step_index() const override { return step_index_; }
  // pred_original_sample is the data prediction x0 of this step.
  absl::StatusOr<StepOutput> Step(const at::Tensor& model_output,
                                  const at::Tensor& sample,
                                  const StepOptions& options = {}) override;

  // float32, num_steps() + 1 entries.
  const at::Tensor& sigmas() const { return sigmas_; }
  // float32, num_train_timesteps entries.
  const at::Tensor& alphas_cumprod() const { return alphas_cumprod_; }
  const DpmSolverMultistepConfig& config() const { return config_; }

 private:
  at::Tensor ConvertModelOutput(const at::Tensor& model_output,
                                const at::Tensor& sample) const;
  at::Tensor FirstOrderUpdate(const at::Tensor& x0,
                              const at::Tensor& sample) const;
  at::Tensor SecondOrderUpdate(const at::Tensor& sample) const;

  DpmSolverMultistepConfig config_;
  at::Tensor alphas_cumprod_;
  at::Tensor train_sigmas_;  // sqrt((1 - alphas_cumprod) / alphas_cumprod)
  at::Tensor timesteps_;
  at::Tensor sigmas_;
  int step_index_ = 0;
  // Data predictions of the previous and the current step.
  at::Tensor previous_x0_;
  at::Tensor current_x0_;
  int lower_order_nums_ = 0;
};

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_DPM_SOLVER_MULTISTEP_H_
