#include "core/engine/denoise_loop.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/models/initial_noise.h"
#include "core/models/tensor_checks.h"

namespace ditserve::engine {
namespace {

using families::Conditioning;
using families::FamilyModel;
using families::GenerationRequest;

bool ClassifierFreeGuidance(const FamilyModel& model,
                            const GenerationRequest& request) {
  return model.guidance_rule() == families::GuidanceRule::kClassifierFree &&
         request.guidance_scale > 1.0F;
}

// What every family's request must satisfy, then the model's own checks.
absl::Status CheckRequest(const FamilyModel& model,
                          const GenerationRequest& request) {
  if (request.seeds.empty()) {
    return absl::InvalidArgumentError("seeds is empty; expected one per image");
  }
  if (request.num_inference_steps <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_inference_steps ",
                                                   request.num_inference_steps,
                                                   " must be positive"));
  }
  if (request.frames <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("frames ", request.frames, " must be positive"));
  }
  RETURN_IF_ERROR(
      parallel::CheckCfgSplit(request.cfg_split, request.guidance_scale));
  if (request.cfg_split.has_value() &&
      model.guidance_rule() != families::GuidanceRule::kClassifierFree) {
    return absl::InvalidArgumentError(
        "the request has a CFG split, but this family has no classifier-free "
        "guidance to split");
  }
  if (!request.step_noise_seeds.empty() &&
      request.step_noise_seeds.size() != request.seeds.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("step_noise_seeds has ", request.step_noise_seeds.size(),
                     " entries; expected none or one per seed (",
                     request.seeds.size(), ")"));
  }
  if (request.dynamic_cfg &&
      model.guidance_rule() != families::GuidanceRule::kClassifierFree) {
    return absl::InvalidArgumentError(
        "dynamic_cfg is set, but this family has no classifier-free guidance "
        "whose scale it could vary");
  }
  if (request.sequence_parallel.has_value() && request.stages.has_value()) {
    return absl::InvalidArgumentError(
        "the request has both sequence_parallel and stages; a denoise runs at "
        "most one of them (PipeFusion stages split the sequence themselves: "
        "PipeFusionStages::sp)");
  }
  return model.CheckRequest(request);
}

// Whether each forward runs both guidance branches in one batch.
bool BatchesBothBranches(const FamilyModel& model,
                         const GenerationRequest& request) {
  return ClassifierFreeGuidance(model, request) &&
         !request.cfg_split.has_value();
}

// The conditioning every forward of the request runs on: both branches
// [negative, positive], this rank's CFG-split branch, or the prompt.
Conditioning ForwardConditioning(const FamilyModel& model,
                                 const GenerationRequest& request) {
  if (BatchesBothBranches(model, request)) {
    return families::ConcatBatches(request.negative_prompt, request.prompt);
  }
  if (request.cfg_split.has_value() &&
      request.cfg_split->branch == parallel::kNegativeBranch) {
    return request.negative_prompt;
  }
  return request.prompt;
}

// The transformer's raw output for one step, split as the request says.
absl::StatusOr<at::Tensor> Forward(FamilyModel& model,
                                   const GenerationRequest& request,
                                   const Conditioning& text,
                                   const at::Tensor& latents,
                                   const at::Tensor& timestep, int step) {
  const at::Tensor model_latents = BatchesBothBranches(model, request)
                                       ? at::cat({latents, latents}, /*dim=*/0)
                                       : latents;
  // The scheduler keeps its timesteps on the CPU; the model takes them on
  // its own device.
  ASSIGN_OR_RETURN(std::unique_ptr<families::BoundForward> forward,
                   model.BindForward(request, model_latents,
                                     timestep.to(latents.device()), text));
  absl::StatusOr<at::Tensor> output;
  if (request.sequence_parallel.has_value()) {
    output = forward->Sharded(*request.sequence_parallel);
  } else if (request.stages.has_value()) {
    output = forward->Staged(*request.stages, step);
  } else {
    output = forward->Whole();
  }
  if (!output.ok() || !request.cfg_split.has_value()) return output;
  return parallel::ExchangeBranches(*request.cfg_split, *output);
}

// The noise prediction the scheduler steps with, from the raw output.
at::Tensor GuidedNoise(const FamilyModel& model,
                       const GenerationRequest& request, const at::Tensor& raw,
                       const at::Tensor& timestep) {
  at::Tensor noise = model.guides_in_float32() ? raw.to(at::kFloat) : raw;
  if (ClassifierFreeGuidance(model, request)) {
    const std::vector<at::Tensor> halves = noise.chunk(2, /*dim=*/0);
    noise = halves[0] +
            GuidanceScaleAt(request, timestep) * (halves[1] - halves[0]);
  }
  return model.NoiseOf(noise);
}

// One generator per image for a scheduler that draws noise every step.
std::vector<at::Generator> StepNoiseGenerators(
    const FamilyModel& model, const GenerationRequest& request) {
  std::vector<at::Generator> generators;
  const bool own_seeds = !request.step_noise_seeds.empty();
  const std::vector<uint64_t>& seeds =
      own_seeds ? request.step_noise_seeds : request.seeds;
  for (const uint64_t seed : seeds) {
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    // Past the image's initial noise, which the same stream drew first.
    if (!own_seeds) {
      at::randn(model.NoiseShape(request), generator,
                at::TensorOptions().dtype(at::kFloat));
    }
    generators.push_back(std::move(generator));
  }
  return generators;
}

}  // namespace

double GuidanceScaleAt(const GenerationRequest& request,
                       const at::Tensor& timestep) {
  if (!request.dynamic_cfg) return request.guidance_scale;
  const double steps = request.num_inference_steps;
  const double ratio = (steps - timestep.item<double>()) / steps;
  return 1.0 + request.guidance_scale *
                   ((1.0 - std::cos(M_PI * std::pow(ratio, 5.0))) / 2.0);
}

absl::StatusOr<at::Tensor> InitialLatents(FamilyModel& model,
                                          const GenerationRequest& request) {
  RETURN_IF_ERROR(CheckRequest(model, request));
  ASSIGN_OR_RETURN(std::unique_ptr<schedulers::Scheduler> scheduler,
                   model.Schedule(request));
  const std::vector<int64_t> shape = model.NoiseShape(request);
  return base::Guarded("initial latents", [&]() -> absl::StatusOr<at::Tensor> {
    std::vector<at::Tensor> images;
    for (uint64_t seed : request.seeds) {
      images.push_back(models::InitialNoise(seed, shape));
    }
    return model.PackLatents(at::cat(images, /*dim=*/0) *
                             scheduler->init_noise_sigma());
  });
}

absl::StatusOr<at::Tensor> Denoise(FamilyModel& model,
                                   const GenerationRequest& request,
                                   at::Tensor latents,
                                   const StepObserver& observer) {
  RETURN_IF_ERROR(CheckRequest(model, request));
  ASSIGN_OR_RETURN(std::unique_ptr<schedulers::Scheduler> scheduler,
                   model.Schedule(request));
  torch::NoGradGuard no_grad;
  return base::Guarded("denoise", [&]() -> absl::StatusOr<at::Tensor> {
    RETURN_IF_ERROR(
        models::CheckShape("latents", latents, model.LatentsShape(request)));
    const Conditioning text = ForwardConditioning(model, request);
    const int steps = request.num_inference_steps;
    const bool clean_sample = steps == 1 && model.one_step_takes_clean_sample();
    schedulers::StepOptions step_options;
    if (scheduler->draws_noise()) {
      step_options.generators = StepNoiseGenerators(model, request);
    }
    for (int step = 0; step < steps; ++step) {
      const at::Tensor timestep = scheduler->timesteps()[step];
      ASSIGN_OR_RETURN(at::Tensor raw,
                       Forward(model, request, text, latents, timestep, step));
      ASSIGN_OR_RETURN(
          schedulers::StepOutput stepped,
          scheduler->Step(GuidedNoise(model, request, raw, timestep), latents,
                          step_options));
      latents =
          (clean_sample ? stepped.pred_original_sample : stepped.prev_sample)
              .to(latents.scalar_type());
      if (observer) {
        RETURN_IF_ERROR(observer(
            StepEvent{step, steps, timestep, raw, latents,
                      stepped.pred_original_sample.to(latents.scalar_type())}));
      }
    }
    return latents;
  });
}

absl::StatusOr<families::DecodeOutput> Generate(
    FamilyModel& model, const GenerationRequest& request,
    const StepObserver& observer) {
  ASSIGN_OR_RETURN(at::Tensor latents, InitialLatents(model, request));
  ASSIGN_OR_RETURN(at::Tensor denoised,
                   Denoise(model, request, std::move(latents), observer));
  return model.Decode(model.UnpackLatents(denoised, request),
                      families::DecodeRequest{.height = request.height,
                                              .width = request.width,
                                              .frames = request.frames});
}

}  // namespace ditserve::engine
