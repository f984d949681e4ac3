#include "core/families/cogvideox/cogvideox_dpm_scheduler.h"

#include <torch/torch.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::families {
namespace {

// Half the log-SNR. It is -inf where alphas_cumprod is 0 (t = 999 after the
// zero-terminal-SNR rescale) and +inf at a final alpha of 1; the step's
// coefficients stay finite because they only use exp(-h) and expm1(-2h).
at::Tensor Lambda(const at::Tensor& alpha_prod) {
  return (alpha_prod / (1 - alpha_prod)).pow(0.5).log();
}

// diffusers' randn_tensor with a CPU generator, per row: row i drawn on the
// CPU in the sample's dtype from generators[i], then moved to the sample's
// device. The generators are handles: the draws advance the caller's
// streams.
at::Tensor DrawNoise(const at::Tensor& sample,
                     const std::vector<at::Generator>& generators) {
  std::vector<at::Tensor> rows;
  for (int64_t row = 0; row < sample.size(0); ++row) {
    rows.push_back(at::randn(sample.narrow(0, row, 1).sizes(), generators[row],
                             sample.options().device(torch::kCPU)));
  }
  return at::cat(rows, /*dim=*/0).to(sample.device());
}

}  // namespace

CogVideoXDPMScheduler::CogVideoXDPMScheduler(CogVideoXSchedulerConfig config)
    : CogVideoXSchedulerBase(std::move(config)) {}

absl::StatusOr<schedulers::StepOutput> CogVideoXDPMScheduler::Step(
    const at::Tensor& model_output, const at::Tensor& sample,
    const schedulers::StepOptions& options) {
  RETURN_IF_ERROR(CheckStep(model_output, sample));
  const bool cpu_generators = std::all_of(
      options.generators.begin(), options.generators.end(),
      [](const at::Generator& generator) {
        return generator.defined() && generator.device().type() == torch::kCPU;
      });
  if (sample.dim() == 0 ||
      static_cast<int64_t>(options.generators.size()) != sample.size(0) ||
      !cpu_generators) {
    return absl::InvalidArgumentError(absl::StrCat(
        class_name(),
        ": StepOptions.generators must hold one CPU generator "
        "per row of the sample (",
        sample.dim() == 0 ? 0 : sample.size(0), "), not ",
        options.generators.size(), "; every step draws its noise from them"));
  }
  const int index = step_index();
  const int64_t prev_timestep = PrevTimestep();
  const bool second_order = index > 0 && prev_timestep >= 0;
  schedulers::StepOutput out;
  RETURN_IF_ERROR(
      base::Guarded(absl::StrCat(class_name(), "::Step ", index), [&] {
        // 0-dim coefficients (float64 for the default schedule): the
        // elementwise math then runs in the sample's dtype, as in diffusers.
        const at::Tensor alpha_prod_t = AlphaProd(TimestepAt(index));
        const at::Tensor alpha_prod_t_prev = AlphaProd(prev_timestep);
        const at::Tensor x0 =
            PredOriginalSample(model_output, sample, alpha_prod_t);
        const at::Tensor lambda = Lambda(alpha_prod_t);
        const at::Tensor h = Lambda(alpha_prod_t_prev) - lambda;
        const at::Tensor mult1 =
            ((1 - alpha_prod_t_prev) / (1 - alpha_prod_t)).pow(0.5) *
            (-h).exp();
        const at::Tensor mult2 = (-2 * h).expm1() * alpha_prod_t_prev.pow(0.5);
        const at::Tensor mult_noise =
            (1 - alpha_prod_t_prev).pow(0.5) * (1 - (-2 * h).exp()).pow(0.5);
        // diffusers draws for the first-order update before it knows whether
        // the second-order one replaces it, so that draw is always taken.
        at::Tensor noise = DrawNoise(sample, options.generators);
        at::Tensor denoised = x0;
        if (second_order) {
          const at::Tensor lambda_back =
              Lambda(AlphaProd(TimestepAt(index - 1)));
          const at::Tensor r = (lambda - lambda_back) / h;
          const at::Tensor mult4 = 1 / (2 * r);
          denoised = (1 + mult4) * x0 - mult4 * previous_x0_;
          noise = DrawNoise(sample, options.generators);
        }
        out.prev_sample =
            mult1 * sample - mult2 * denoised + mult_noise * noise;
        out.pred_original_sample = x0;
      }));
  previous_x0_ = out.pred_original_sample;
  AdvanceStep();
  return out;
}

}  // namespace ditserve::families
