#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DDIM_SCHEDULER_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DDIM_SCHEDULER_H_

// diffusers' CogVideoXDDIMScheduler: deterministic DDIM on the CogVideoX
// schedule (see cogvideox_schedule.h).

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/families/cogvideox/cogvideox_schedule.h"
#include "core/schedulers/scheduler.h"

namespace ditserve::families {

class CogVideoXDDIMScheduler : public CogVideoXSchedulerBase {
 public:
  explicit CogVideoXDDIMScheduler(CogVideoXSchedulerConfig config);

  absl::string_view class_name() const override {
    return "CogVideoXDDIMScheduler";
  }
  // options.eta and options.variance_noise are ignored: diffusers' step
  // accepts them but has no variance term.
  absl::StatusOr<schedulers::StepOutput> Step(
      const at::Tensor& model_output, const at::Tensor& sample,
      const schedulers::StepOptions& options = {}) override;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DDIM_SCHEDULER_H_
