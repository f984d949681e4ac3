#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DPM_SCHEDULER_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DPM_SCHEDULER_H_

// diffusers' CogVideoXDPMScheduler: the stochastic DPM-Solver++(2M) (SDE)
// on the CogVideoX schedule (see cogvideox_schedule.h), stepped as
// CogVideoXPipeline steps it. The pipeline hands the previous step's x0 and
// timestep back to step(); here the scheduler keeps them itself.

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/families/cogvideox/cogvideox_schedule.h"
#include "core/schedulers/scheduler.h"

namespace ditserve::families {

class CogVideoXDPMScheduler : public CogVideoXSchedulerBase {
 public:
  explicit CogVideoXDPMScheduler(CogVideoXSchedulerConfig config);

  absl::string_view class_name() const override {
    return "CogVideoXDPMScheduler";
  }
  // First order on step 0 and on a step to a timestep below 0, second order
  // otherwise. Always adds noise, row i of the sample's from
  // options.generators[i] (required, CPU, one per row): one draw in a
  // first-order step, two in a second-order step of which the first is
  // thrown away, exactly as diffusers consumes the stream. options.eta and
  // options.variance_noise are ignored, as in diffusers.
  bool draws_noise() const override { return true; }
  absl::StatusOr<schedulers::StepOutput> Step(
      const at::Tensor& model_output, const at::Tensor& sample,
      const schedulers::StepOptions& options = {}) override;

 private:
  // The previous step's pred_original_sample (the pipeline's
  // old_pred_original_sample); read from step 1 on.
  at::Tensor previous_x0_;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DPM_SCHEDULER_H_
