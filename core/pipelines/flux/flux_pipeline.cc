#include "core/pipelines/flux/flux_pipeline.h"

#include <torch/torch.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/models/flux/flux_transformer_loader.h"
#include "core/models/tensor_checks.h"
#include "core/pipelines/initial_noise.h"
#include "core/schedulers/numpy_compat.h"

namespace ditserve::pipelines {
namespace {

// The transformer takes timesteps and guidance divided by this.
constexpr double kTimestepScale = 1000.0;

// One transformer forward of denoising step `step`, split as Denoise's
// arguments say.
absl::StatusOr<at::Tensor> NoisePrediction(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs, int step,
    const SequenceParallel* sequence_parallel, const PipeFusionStages* stages) {
  if (sequence_parallel != nullptr) {
    return ShardedFluxForward(transformer, inputs, *sequence_parallel);
  }
  if (stages == nullptr) return transformer.Forward(inputs);
  if (stages->IsWholeSequenceStep(step)) {
    return StagedFluxForward(transformer, inputs, *stages);
  }
  return PatchedFluxForward(transformer, inputs, *stages);
}

}  // namespace

FluxPipeline::FluxPipeline(
    std::shared_ptr<models::FluxTransformer2DModel> transformer,
    std::shared_ptr<models::AutoencoderKL> vae,
    schedulers::FlowMatchEulerConfig scheduler_config,
    models::Placement placement)
    : transformer_(std::move(transformer)),
      vae_(std::move(vae)),
      scheduler_config_(std::move(scheduler_config)),
      placement_(placement) {}

absl::StatusOr<std::unique_ptr<FluxPipeline>> FluxPipeline::Load(
    const std::string& dir, std::shared_ptr<models::Attention> attention,
    const models::Placement& placement,
    std::optional<models::BlockRange> blocks) {
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::FluxTransformer2DModel> transformer,
      models::LoadFluxTransformer2DModel(
          dir + "/transformer", std::move(attention), placement, blocks));
  ASSIGN_OR_RETURN(std::shared_ptr<models::AutoencoderKL> vae,
                   models::LoadAutoencoderKL(dir + "/vae", placement));
  const std::string scheduler_path = dir + "/scheduler/scheduler_config.json";
  ASSIGN_OR_RETURN(nlohmann::json scheduler_json,
                   base::ReadJsonObjectFile(scheduler_path));
  ASSIGN_OR_RETURN(
      schedulers::FlowMatchEulerConfig scheduler_config,
      schedulers::ParseFlowMatchEulerConfig(scheduler_json, scheduler_path));
  const int64_t latent_channels = vae->config().latent_channels;
  if (transformer->config().in_channels != 4 * latent_channels) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": transformer in_channels ", transformer->config().in_channels,
        " must be 4 x the VAE's latent_channels ", latent_channels,
        " (2x2 packing)"));
  }
  return std::make_unique<FluxPipeline>(std::move(transformer), std::move(vae),
                                        std::move(scheduler_config), placement);
}

c10::TensorOptions FluxPipeline::options() const {
  return c10::TensorOptions().device(placement_.device).dtype(placement_.dtype);
}

absl::Status FluxPipeline::CheckRequest(const FluxRequest& request) const {
  const models::FluxTransformerConfig& config = transformer_->config();
  const int64_t batch = static_cast<int64_t>(request.seeds.size());
  if (batch == 0) {
    return absl::InvalidArgumentError("seeds is empty; expected one per image");
  }
  if (request.num_inference_steps <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_inference_steps ",
                                                   request.num_inference_steps,
                                                   " must be positive"));
  }
  absl::Status status =
      models::CheckShape("prompt_embeds", request.prompt_embeds,
                         {batch, models::kAnySize, config.joint_attention_dim});
  status.Update(models::CheckShape("pooled_prompt_embeds",
                                   request.pooled_prompt_embeds,
                                   {batch, config.pooled_projection_dim}));
  status.Update(LatentGridFor(request.height, request.width, vae_scale_factor())
                    .status());
  return status;
}

absl::StatusOr<schedulers::FlowMatchEulerDiscreteScheduler>
FluxPipeline::Schedule(int64_t height, int64_t width,
                       int num_inference_steps) const {
  ASSIGN_OR_RETURN(FluxLatentGrid grid,
                   LatentGridFor(height, width, vae_scale_factor()));
  schedulers::FlowMatchEulerDiscreteScheduler scheduler(scheduler_config_);
  schedulers::TimestepOptions timestep_options;
  timestep_options.sigmas =
      schedulers::Linspace(1.0, 1.0 / num_inference_steps, num_inference_steps);
  timestep_options.mu =
      schedulers::CalculateShift(grid.tokens(), scheduler_config_);
  absl::Status status =
      scheduler.SetTimesteps(num_inference_steps, timestep_options);
  if (!status.ok()) return status;
  return scheduler;
}

absl::StatusOr<at::Tensor> FluxPipeline::InitialLatents(
    const FluxRequest& request) const {
  RETURN_IF_ERROR(CheckRequest(request));
  const FluxLatentGrid grid =
      *LatentGridFor(request.height, request.width, vae_scale_factor());
  const int64_t channels = vae_->config().latent_channels;
  return base::Guarded(
      "FluxPipeline initial latents", [&]() -> absl::StatusOr<at::Tensor> {
        std::vector<at::Tensor> images;
        for (uint64_t seed : request.seeds) {
          images.push_back(
              InitialNoise(seed, {1, channels, grid.height, grid.width}));
        }
        return PackLatents(at::cat(images, /*dim=*/0)).to(options());
      });
}

absl::StatusOr<at::Tensor> FluxPipeline::Denoise(
    const FluxRequest& request, at::Tensor latents,
    const FluxStepObserver& observer, const SequenceParallel* sequence_parallel,
    const PipeFusionStages* stages) {
  RETURN_IF_ERROR(CheckRequest(request));
  if (sequence_parallel != nullptr && stages != nullptr) {
    return absl::InvalidArgumentError(
        "Denoise got both sequence_parallel and stages; a FLUX denoise runs "
        "at most one of them (PipeFusion stages split the sequence "
        "themselves: PipeFusionStages::sp)");
  }
  const FluxLatentGrid grid =
      *LatentGridFor(request.height, request.width, vae_scale_factor());
  RETURN_IF_ERROR(
      models::CheckShape("latents", latents,
                         {static_cast<int64_t>(request.seeds.size()),
                          grid.tokens(), transformer_->config().in_channels}));
  ASSIGN_OR_RETURN(
      schedulers::FlowMatchEulerDiscreteScheduler scheduler,
      Schedule(request.height, request.width, request.num_inference_steps));
  torch::NoGradGuard no_grad;
  return base::Guarded(
      "FluxPipeline denoise", [&]() -> absl::StatusOr<at::Tensor> {
        const int64_t batch = latents.size(0);
        models::FluxTransformerInputs inputs;
        inputs.encoder_hidden_states = request.prompt_embeds.to(options());
        inputs.pooled_projections = request.pooled_prompt_embeds.to(options());
        inputs.img_ids = LatentImageIds(grid, options());
        inputs.txt_ids = TextIds(request.prompt_embeds.size(1), options());
        if (transformer_->config().guidance_embeds) {
          inputs.guidance = at::full({1}, request.guidance_scale,
                                     at::TensorOptions()
                                         .device(placement_.device)
                                         .dtype(at::kFloat))
                                .expand({batch});
        }
        for (int step = 0; step < request.num_inference_steps; ++step) {
          const at::Tensor timestep = scheduler.timesteps()[step];
          inputs.hidden_states = latents;
          inputs.timestep = timestep.expand({batch}).to(latents.scalar_type()) /
                            kTimestepScale;
          ASSIGN_OR_RETURN(at::Tensor noise_pred,
                           NoisePrediction(*transformer_, inputs, step,
                                           sequence_parallel, stages));
          ASSIGN_OR_RETURN(schedulers::StepOutput stepped,
                           scheduler.Step(noise_pred, latents));
          latents = stepped.prev_sample.to(latents.scalar_type());
          if (observer) {
            absl::Status status =
                observer(FluxStepEvent{step, request.num_inference_steps,
                                       timestep, noise_pred, latents});
            if (!status.ok()) return status;
          }
        }
        return latents;
      });
}

absl::StatusOr<FluxDecodeOutput> FluxPipeline::Decode(const at::Tensor& latents,
                                                      int64_t height,
                                                      int64_t width) {
  ASSIGN_OR_RETURN(FluxLatentGrid grid,
                   LatentGridFor(height, width, vae_scale_factor()));
  RETURN_IF_ERROR(models::CheckShape(
      "latents", latents,
      {models::kAnySize, grid.tokens(), 4 * vae_->config().latent_channels}));
  torch::NoGradGuard no_grad;
  return base::Guarded(
      "FluxPipeline decode", [&]() -> absl::StatusOr<FluxDecodeOutput> {
        const models::AutoencoderKLConfig& config = vae_->config();
        FluxDecodeOutput out;
        out.vae_input = UnpackLatents(latents, grid) / config.scaling_factor +
                        config.shift_factor.value_or(0.0);
        ASSIGN_OR_RETURN(at::Tensor raw, vae_->Decode(out.vae_input));
        out.images = PostprocessDecoded(raw);
        return out;
      });
}

absl::StatusOr<FluxDecodeOutput> FluxPipeline::Generate(
    const FluxRequest& request, const FluxStepObserver& observer) {
  ASSIGN_OR_RETURN(at::Tensor latents, InitialLatents(request));
  ASSIGN_OR_RETURN(at::Tensor denoised,
                   Denoise(request, std::move(latents), observer));
  return Decode(denoised, request.height, request.width);
}

}  // namespace ditserve::pipelines
