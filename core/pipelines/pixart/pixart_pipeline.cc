#include "core/pipelines/pixart/pixart_pipeline.h"

#include <torch/torch.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/models/tensor_checks.h"
#include "core/pipelines/initial_noise.h"
#include "core/pipelines/latent_stage_model.h"
#include "core/schedulers/load_scheduler.h"

namespace ditserve::pipelines {
namespace {}  // namespace

absl::StatusOr<at::Tensor> ShardedPixArtForward(
    models::PixArtTransformer2DModel& transformer,
    const models::PixArtTransformerInputs& inputs,
    const SequenceParallel& sequence_parallel) {
  return ShardedLatentForward(transformer, inputs, sequence_parallel, 0);
}

namespace {

// A PixArt stage for one forward's inputs: only the image stream travels;
// the attention sequence is the image tokens.
class PixArtStageModel final
    : public LatentStageModel<models::PixArtTransformer2DModel,
                              models::PixArtTransformerInputs> {
 public:
  using LatentStageModel::LatentStageModel;

  int64_t text_tokens() const override { return 0; }

  at::Tensor AttentionRows(const models::TokenSpan& patch) const override {
    return patch.begin + at::arange(patch.tokens, at::kLong);
  }

  absl::StatusOr<StageStreams> Forward(
      const models::TokenSpan& patch,
      const std::optional<StageStreams>& incoming) override {
    std::optional<at::Tensor> image;
    if (incoming.has_value()) image = incoming->image;
    ASSIGN_OR_RETURN(at::Tensor out,
                     transformer().ForwardStage(inputs(), patch, image));
    return StageStreams{.image = out};
  }
};

}  // namespace

absl::StatusOr<at::Tensor> PipeFusionPixArtForward(
    models::PixArtTransformer2DModel& transformer,
    const models::PixArtTransformerInputs& inputs,
    const PipeFusionStages& stages, int step) {
  return PixArtStageModel(transformer, inputs).Run(stages, step);
}

PixArtPipeline::PixArtPipeline(
    std::shared_ptr<models::PixArtTransformer2DModel> transformer,
    std::shared_ptr<models::AutoencoderKL> vae, nlohmann::json scheduler_config,
    models::Placement placement)
    : transformer_(std::move(transformer)),
      vae_(std::move(vae)),
      scheduler_config_(std::move(scheduler_config)),
      placement_(placement) {}

absl::StatusOr<std::unique_ptr<PixArtPipeline>> PixArtPipeline::Load(
    const std::string& dir, std::shared_ptr<models::Attention> attention,
    const models::Placement& placement,
    std::optional<models::BlockRange> blocks) {
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::PixArtTransformer2DModel> transformer,
      models::LoadPixArtTransformer2DModel(
          dir + "/transformer", std::move(attention), placement, blocks));
  ASSIGN_OR_RETURN(std::shared_ptr<models::AutoencoderKL> vae,
                   models::LoadAutoencoderKL(dir + "/vae", placement));
  const std::string scheduler_path = dir + "/scheduler/scheduler_config.json";
  ASSIGN_OR_RETURN(nlohmann::json scheduler_json,
                   base::ReadJsonFile(scheduler_path));
  // Fail at load, not at the first request, on a scheduler we cannot build.
  ASSIGN_OR_RETURN(std::unique_ptr<schedulers::Scheduler> scheduler,
                   schedulers::MakeScheduler(scheduler_json, scheduler_path));
  const models::PixArtTransformerConfig& config = transformer->config();
  const int64_t latent_channels = vae->config().latent_channels;
  if (config.in_channels != latent_channels ||
      (config.out_channels != latent_channels &&
       config.out_channels != 2 * latent_channels)) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": transformer in_channels ", config.in_channels,
        " and out_channels ", config.out_channels,
        " do not fit the VAE's latent_channels ", latent_channels,
        " (expected in = latent, out = latent or 2 x latent for learned "
        "sigma)"));
  }
  return std::make_unique<PixArtPipeline>(std::move(transformer),
                                          std::move(vae),
                                          std::move(scheduler_json), placement);
}

c10::TensorOptions PixArtPipeline::options() const {
  return c10::TensorOptions().device(placement_.device).dtype(placement_.dtype);
}

absl::Status PixArtPipeline::CheckRequest(const PixArtRequest& request) const {
  const models::PixArtTransformerConfig& config = transformer_->config();
  const int64_t batch = static_cast<int64_t>(request.seeds.size());
  if (batch == 0) {
    return absl::InvalidArgumentError("seeds is empty; expected one per image");
  }
  if (request.num_inference_steps <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_inference_steps ",
                                                   request.num_inference_steps,
                                                   " must be positive"));
  }
  const int64_t multiple = latent_scale() * config.patch_size;
  if (request.height <= 0 || request.width <= 0 ||
      request.height % multiple != 0 || request.width % multiple != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image size ", request.height, "x", request.width,
        " must be positive multiples of ", multiple, " (VAE scale ",
        latent_scale(), " x patch ", config.patch_size, ")"));
  }
  if (request.output_size.has_value() &&
      (request.output_size->height <= 0 || request.output_size->width <= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("output size ", request.output_size->height, "x",
                     request.output_size->width, " must be positive"));
  }
  absl::Status status =
      models::CheckShape("prompt_embeds", request.prompt_embeds,
                         {batch, models::kAnySize, config.caption_channels});
  if (!status.ok()) return status;
  const int64_t text_tokens = request.prompt_embeds.size(1);
  status.Update(models::CheckShape("prompt_attention_mask",
                                   request.prompt_attention_mask,
                                   {batch, text_tokens}));
  if (request.guidance_scale > 1.0F) {
    status.Update(models::CheckShape(
        "negative_prompt_embeds", request.negative_prompt_embeds,
        {batch, text_tokens, config.caption_channels}));
    status.Update(models::CheckShape("negative_prompt_attention_mask",
                                     request.negative_prompt_attention_mask,
                                     {batch, text_tokens}));
  }
  status.Update(CheckCfgSplit(request.cfg_split, request.guidance_scale));
  if (request.sequence_parallel.has_value() && request.stages.has_value()) {
    status.Update(absl::InvalidArgumentError(
        "the request has both sequence_parallel and stages; a PixArt denoise "
        "runs at most one of them (PipeFusion stages split the sequence "
        "themselves: PipeFusionStages::sp)"));
  }
  return status;
}

absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> PixArtPipeline::Schedule(
    int num_inference_steps) const {
  ASSIGN_OR_RETURN(
      std::unique_ptr<schedulers::Scheduler> scheduler,
      schedulers::MakeScheduler(scheduler_config_, "scheduler_config.json"));
  absl::Status status = scheduler->SetTimesteps(num_inference_steps);
  if (!status.ok()) return status;
  return scheduler;
}

absl::StatusOr<at::Tensor> PixArtPipeline::InitialLatents(
    const PixArtRequest& request) const {
  RETURN_IF_ERROR(CheckRequest(request));
  ASSIGN_OR_RETURN(std::unique_ptr<schedulers::Scheduler> scheduler,
                   Schedule(request.num_inference_steps));
  const int64_t channels = vae_->config().latent_channels;
  return base::Guarded(
      "PixArtPipeline initial latents", [&]() -> absl::StatusOr<at::Tensor> {
        std::vector<at::Tensor> images;
        for (uint64_t seed : request.seeds) {
          images.push_back(
              InitialNoise(seed, {1, channels, request.height / latent_scale(),
                                  request.width / latent_scale()}));
        }
        return (at::cat(images, /*dim=*/0) * scheduler->init_noise_sigma())
            .to(options());
      });
}

absl::StatusOr<at::Tensor> PixArtPipeline::PredictNoise(
    const PixArtRequest& request, const at::Tensor& latents,
    const at::Tensor& timestep, int step, at::Tensor& raw) {
  const bool guided = request.guidance_scale > 1.0F;
  models::PixArtTransformerInputs inputs;
  if (guided && !request.cfg_split.has_value()) {
    inputs.hidden_states = at::cat({latents, latents}, /*dim=*/0);
    inputs.encoder_hidden_states = at::cat(
        {request.negative_prompt_embeds, request.prompt_embeds}, /*dim=*/0);
    inputs.encoder_attention_mask = at::cat(
        {request.negative_prompt_attention_mask, request.prompt_attention_mask},
        /*dim=*/0);
  } else {
    const bool negative = request.cfg_split.has_value() &&
                          request.cfg_split->branch == kNegativeBranch;
    inputs.hidden_states = latents;
    inputs.encoder_hidden_states =
        negative ? request.negative_prompt_embeds : request.prompt_embeds;
    inputs.encoder_attention_mask = negative
                                        ? request.negative_prompt_attention_mask
                                        : request.prompt_attention_mask;
  }
  inputs.encoder_hidden_states = inputs.encoder_hidden_states.to(options());
  inputs.encoder_attention_mask =
      inputs.encoder_attention_mask->to(placement_.device);
  const int64_t model_batch = inputs.hidden_states.size(0);
  inputs.timestep = timestep.to(placement_.device).expand({model_batch});
  if (transformer_->config().use_additional_conditions) {
    const double height = static_cast<double>(request.height);
    const double width = static_cast<double>(request.width);
    inputs.micro_conditions = models::PixArtMicroConditions{
        at::tensor({height, width}, options()).repeat({model_batch, 1}),
        at::tensor({height / width}, options()).repeat({model_batch, 1})};
  }
  absl::StatusOr<at::Tensor> output;
  if (request.sequence_parallel.has_value()) {
    output =
        ShardedPixArtForward(*transformer_, inputs, *request.sequence_parallel);
  } else if (request.stages.has_value()) {
    output =
        PipeFusionPixArtForward(*transformer_, inputs, *request.stages, step);
  } else {
    output = transformer_->Forward(inputs);
  }
  if (!output.ok()) return output.status();
  if (request.cfg_split.has_value()) {
    output = ExchangeBranches(*request.cfg_split, *output);
    if (!output.ok()) return output.status();
  }
  raw = *output;
  at::Tensor noise = raw;
  if (guided) {
    const std::vector<at::Tensor> halves = noise.chunk(2, /*dim=*/0);
    noise = halves[0] + request.guidance_scale * (halves[1] - halves[0]);
  }
  if (transformer_->config().out_channels == 2 * latents.size(1)) {
    // Learned sigma: the first half of the channels is the noise.
    noise = noise.chunk(2, /*dim=*/1)[0];
  }
  return noise;
}

absl::StatusOr<at::Tensor> PixArtPipeline::Denoise(
    const PixArtRequest& request, at::Tensor latents,
    const PixArtStepObserver& observer) {
  RETURN_IF_ERROR(CheckRequest(request));
  RETURN_IF_ERROR(models::CheckShape(
      "latents", latents,
      {static_cast<int64_t>(request.seeds.size()),
       vae_->config().latent_channels, request.height / latent_scale(),
       request.width / latent_scale()}));
  ASSIGN_OR_RETURN(std::unique_ptr<schedulers::Scheduler> scheduler,
                   Schedule(request.num_inference_steps));
  torch::NoGradGuard no_grad;
  return base::Guarded(
      "PixArtPipeline denoise", [&]() -> absl::StatusOr<at::Tensor> {
        for (int step = 0; step < request.num_inference_steps; ++step) {
          const at::Tensor timestep = scheduler->timesteps()[step];
          at::Tensor raw;
          ASSIGN_OR_RETURN(at::Tensor noise,
                           PredictNoise(request, latents, timestep, step, raw));
          ASSIGN_OR_RETURN(schedulers::StepOutput stepped,
                           scheduler->Step(noise, latents));
          // With a single step diffusers takes the predicted clean sample (the
          // one-step DMD distillation of PixArt-α).
          latents =
              (request.num_inference_steps == 1 ? stepped.pred_original_sample
                                                : stepped.prev_sample)
                  .to(latents.scalar_type());
          if (observer) {
            absl::Status status = observer(PixArtStepEvent{
                step, request.num_inference_steps, timestep, raw, latents});
            if (!status.ok()) return status;
          }
        }
        return latents;
      });
}

absl::StatusOr<PixArtDecodeOutput> PixArtPipeline::Decode(
    const at::Tensor& latents, std::optional<config::ImageSize> output_size) {
  RETURN_IF_ERROR(
      models::CheckShape("latents", latents,
                         {models::kAnySize, vae_->config().latent_channels,
                          models::kAnySize, models::kAnySize}));
  torch::NoGradGuard no_grad;
  return base::Guarded(
      "PixArtPipeline decode", [&]() -> absl::StatusOr<PixArtDecodeOutput> {
        PixArtDecodeOutput out;
        out.vae_input = latents / vae_->config().scaling_factor;
        ASSIGN_OR_RETURN(at::Tensor raw, vae_->Decode(out.vae_input));
        out.images = PostprocessDecoded(
            output_size.has_value() ? ResizeAndCenterCrop(raw, *output_size)
                                    : raw);
        return out;
      });
}

absl::StatusOr<PixArtDecodeOutput> PixArtPipeline::Generate(
    const PixArtRequest& request, const PixArtStepObserver& observer) {
  ASSIGN_OR_RETURN(at::Tensor latents, InitialLatents(request));
  ASSIGN_OR_RETURN(at::Tensor denoised,
                   Denoise(request, std::move(latents), observer));
  return Decode(denoised, request.output_size);
}

}  // namespace ditserve::pipelines
