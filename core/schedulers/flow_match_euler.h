#ifndef DITSERVE_CORE_SCHEDULERS_FLOW_MATCH_EULER_H_
#define DITSERVE_CORE_SCHEDULERS_FLOW_MATCH_EULER_H_

// diffusers' FlowMatchEulerDiscreteScheduler (FLUX.1, SD3): sigmas from 1 to
// 0, static shift or resolution-dependent ("dynamic") shift by mu, Euler steps
// prev = sample + (sigma_next - sigma) * velocity.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/schedulers/scheduler.h"
#include "nlohmann/json.hpp"

namespace ditserve::schedulers {

struct FlowMatchEulerConfig {
  int64_t num_train_timesteps = 1000;
  double shift = 1.0;
  bool use_dynamic_shifting = false;
  double base_shift = 0.5;
  double max_shift = 1.15;
  int64_t base_image_seq_len = 256;
  int64_t max_image_seq_len = 4096;
  // "exponential" or "linear".
  std::string time_shift_type = "exponential";
  std::optional<double> shift_terminal;
  bool invert_sigmas = false;
};

// Reads a scheduler_config.json object; unsupported options (karras /
// exponential / beta sigmas, stochastic sampling) are errors.
absl::StatusOr<FlowMatchEulerConfig> ParseFlowMatchEulerConfig(
    const nlohmann::json& json, const std::string& source);

// mu for dynamic shifting, as the FLUX pipeline computes it (calculate_shift):
// linear in the packed image token count, base_shift at base_image_seq_len
// and max_shift at max_image_seq_len.
double CalculateShift(int64_t image_seq_len,
                      const FlowMatchEulerConfig& config);

class FlowMatchEulerDiscreteScheduler : public Scheduler {
 public:
  explicit FlowMatchEulerDiscreteScheduler(FlowMatchEulerConfig config);

  absl::string_view class_name() const override {
    return "FlowMatchEulerDiscreteScheduler";
  }
  // Without options.sigmas: num_inference_steps timesteps evenly spaced from
  // the largest to the smallest training sigma (SD3). With them (FLUX): those
  // sigmas, whose count must equal num_inference_steps. options.mu is
  // required when use_dynamic_shifting.
  absl::Status SetTimesteps(int num_inference_steps,
                            const TimestepOptions& options = {}) override;
  const at::Tensor& timesteps() const override { return timesteps_; }
  int step_index() const override { return step_index_; }
  absl::StatusOr<StepOutput> Step(const at::Tensor& model_output,
                                  const at::Tensor& sample,
                                  const StepOptions& options = {}) override;

  // float32, num_steps() + 1 entries, the last 0 (1 with invert_sigmas).
  const at::Tensor& sigmas() const { return sigmas_; }
  const FlowMatchEulerConfig& config() const { return config_; }

 private:
  FlowMatchEulerConfig config_;
  // The shifted training sigmas' extremes, as diffusers keeps them.
  double sigma_min_ = 0.0;
  double sigma_max_ = 1.0;
  at::Tensor timesteps_;
  at::Tensor sigmas_;
  int step_index_ = 0;
};

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_FLOW_MATCH_EULER_H_
