#ifndef DITSERVE_CORE_SCHEDULERS_SCHEDULER_H_
#define DITSERVE_CORE_SCHEDULERS_SCHEDULER_H_

// The denoising schedule of a pipeline, as the diffusers schedulers define it:
// SetTimesteps() fixes the steps, then Step() is called once per timestep, in
// order, with the model output for that timestep. Schedulers are stateful
// (step counter, multistep history) and used by one denoise loop at a time.

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::schedulers {

struct TimestepOptions {
  // Explicit sigmas (flow matching only; the FLUX pipeline passes
  // linspace(1, 1/N, N)). Empty: the scheduler's own spacing.
  std::vector<double> sigmas;
  // Resolution-dependent shift; required by flow matching with
  // use_dynamic_shifting (see CalculateShift), ignored otherwise.
  std::optional<double> mu;
};

struct StepOptions {
  // DDIM only: the weight of the stochastic term (0 = deterministic DDIM).
  double eta = 0.0;
  // DDIM with eta > 0: the noise to add, shaped like the sample. Required, so
  // the caller owns the random stream (a seeded CPU generator).
  at::Tensor variance_noise;
  // CogVideoXDPMScheduler only, and required there: it draws its noise itself
  // (one or two tensors per step, as diffusers does), so the caller hands over
  // the seeded CPU generator that owns the stream.
  std::optional<at::Generator> generator;
};

struct StepOutput {
  at::Tensor prev_sample;
  // The predicted denoised sample x0 (DDIM and DPM-Solver; undefined for
  // flow matching, which never forms it).
  at::Tensor pred_original_sample;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // The diffusers class name ("FlowMatchEulerDiscreteScheduler", ...).
  virtual absl::string_view class_name() const = 0;

  // Resets the step counter and history.
  virtual absl::Status SetTimesteps(int num_inference_steps,
                                    const TimestepOptions& options = {}) = 0;

  // One entry per step, in the order Step() consumes them: float32 on the
  // 0..num_train_timesteps scale for flow matching, int64 for DPM and DDIM.
  virtual const at::Tensor& timesteps() const = 0;

  // Index of the timestep the next Step() call handles.
  virtual int step_index() const = 0;

  // Advances one step. `model_output` and `sample` have the same shape; the
  // result keeps the model output's dtype (computation is float32 or wider).
  virtual absl::StatusOr<StepOutput> Step(const at::Tensor& model_output,
                                          const at::Tensor& sample,
                                          const StepOptions& options = {}) = 0;

  // Scale of the initial noise (1 for every scheduler here).
  virtual double init_noise_sigma() const { return 1.0; }

  int num_steps() const;
};

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_SCHEDULER_H_
