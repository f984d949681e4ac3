#include "core/families/cogvideox/cogvideox_ddim_scheduler.h"

#include <torch/torch.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::families {

CogVideoXDDIMScheduler::CogVideoXDDIMScheduler(CogVideoXSchedulerConfig config)
    : CogVideoXSchedulerBase(std::move(config)) {}

absl::StatusOr<schedulers::StepOutput> CogVideoXDDIMScheduler::Step(
    const at::Tensor& model_output, const at::Tensor& sample,
    const schedulers::StepOptions& /*options*/) {
  RETURN_IF_ERROR(CheckStep(model_output, sample));
  schedulers::StepOutput out;
  RETURN_IF_ERROR(
      base::Guarded(absl::StrCat(class_name(), "::Step ", step_index()), [&] {
        // 0-dim coefficients (float64 for the default schedule): the
        // elementwise math then runs in the sample's dtype, as in diffusers.
        const at::Tensor alpha_prod_t = AlphaProd(TimestepAt(step_index()));
        const at::Tensor alpha_prod_t_prev = AlphaProd(PrevTimestep());
        const at::Tensor x0 =
            PredOriginalSample(model_output, sample, alpha_prod_t);
        const at::Tensor a_t =
            ((1 - alpha_prod_t_prev) / (1 - alpha_prod_t)).pow(0.5);
        const at::Tensor b_t =
            alpha_prod_t_prev.pow(0.5) - alpha_prod_t.pow(0.5) * a_t;
        out.prev_sample = a_t * sample + b_t * x0;
        out.pred_original_sample = x0;
      }));
  AdvanceStep();
  return out;
}

}  // namespace ditserve::families
