#ifndef DITSERVE_CORE_ENGINE_DENOISE_LOOP_H_
#define DITSERVE_CORE_ENGINE_DENOISE_LOOP_H_

#include <ATen/core/Tensor.h>

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/families/family.h"

// The one denoise loop every family runs: seeded noise, scheduler steps,
// guidance, and the split of each transformer forward (whole, sequence
// shard, PipeFusion stage, CFG branch) that the request asks for.
namespace ditserve::engine {

// What the loop reports after each step.
struct StepEvent {
  int step = 0;
  int num_steps = 0;
  // The step's timestep, as the scheduler holds it.
  at::Tensor timestep;
  // Raw transformer output of the step, in the packed latent layout: the
  // [negative, positive] batch with classifier-free guidance (with a CFG
  // split, both ranks' outputs after the exchange), every output channel.
  at::Tensor noise_pred;
  // Packed latents after the scheduler step.
  at::Tensor latents;
  // The scheduler's estimate of the clean packed latents from this step's
  // guided prediction (its pred_original_sample): what a preview shows.
  at::Tensor denoised;
};

// Called after every step; a non-OK status stops the loop and is returned
// (how cancellation and deadlines end a generation between steps).
using StepObserver = std::function<absl::Status(const StepEvent&)>;

// The starting latents of `request` in the model's packed layout: image i
// from InitialNoise(seed i), scaled by the scheduler's init_noise_sigma.
// INVALID_ARGUMENT for a request the model cannot run.
absl::StatusOr<at::Tensor> InitialLatents(
    families::FamilyModel& model, const families::GenerationRequest& request);

// The denoise loop from packed `latents`; returns the final packed latents.
// `observer` may be empty.
absl::StatusOr<at::Tensor> Denoise(families::FamilyModel& model,
                                   const families::GenerationRequest& request,
                                   at::Tensor latents,
                                   const StepObserver& observer);

// The classifier-free guidance scale of the step at `timestep` (0-dim): the
// request's, or with dynamic_cfg diffusers' CogVideoX ramp 1 + g × (1 −
// cos(π × ((N − t) / N)^5)) / 2 over the timestep value t (not the step
// index; t near 999 makes the ratio large and negative, as in diffusers).
double GuidanceScaleAt(const families::GenerationRequest& request,
                       const at::Tensor& timestep);

// InitialLatents, Denoise, unpack and Decode at the generated size.
absl::StatusOr<families::DecodeOutput> Generate(
    families::FamilyModel& model, const families::GenerationRequest& request,
    const StepObserver& observer);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_DENOISE_LOOP_H_
