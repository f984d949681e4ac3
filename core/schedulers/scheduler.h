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
  // Schedulers that draw noise themselves (draws_noise(); required there):
  // one seeded CPU generator per row of the sample (dim 0), each owning its
  // image's stream, so an image's noise does not depend on its batch. With
  // one row this is diffusers' single generator.
  std::vector<at::Generator> generators;
};

struct StepOutput {
  at::Tensor prev_sample;
  // The predicted denoised sample x0, from this step's model output.
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

  // Whether Step needs StepOptions::generators (CogVideoXDPMScheduler).
  virtual bool draws_noise() const { return false; }

  int num_steps() const;
};

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_SCHEDULER_H_
