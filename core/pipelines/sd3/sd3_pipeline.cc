#include "core/pipelines/sd3/sd3_pipeline.h"

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

namespace ditserve::pipelines {
namespace {}  // namespace

absl::StatusOr<at::Tensor> ShardedSD3Forward(
    models::SD3Transformer2DModel& transformer,
    const models::SD3TransformerInputs& inputs,
    const SequenceParallel& sequence_parallel) {
  return ShardedLatentForward(transformer, inputs, sequence_parallel,
                              inputs.encoder_hidden_states.size(1));
}

namespace {

// An SD3 stage for one forward's inputs: the image and text streams
// travel; the attention sequence is [image, text].
class SD3StageModel final
    : public LatentStageModel<models::SD3Transformer2DModel,
                              models::SD3TransformerInputs> {
 public:
  using LatentStageModel::LatentStageModel;

  int64_t text_tokens() const override {
    return inputs().encoder_hidden_states.size(1);
  }

  at::Tensor AttentionRows(const models::TokenSpan& patch) const override {
    return at::cat({patch.begin + at::arange(patch.tokens, at::kLong),
                    image_tokens() + at::arange(text_tokens(), at::kLong)});
  }

  absl::StatusOr<StageStreams> Forward(
      const models::TokenSpan& patch,
      const std::optional<StageStreams>& incoming) override {
    std::optional<models::SD3Streams> streams;
    if (incoming.has_value()) {
      streams =
          models::SD3Streams{.image = incoming->image, .text = incoming->text};
    }
    ASSIGN_OR_RETURN(models::SD3Streams out,
                     transformer().ForwardStage(inputs(), patch, streams));
    return StageStreams{.image = out.image, .text = out.text};
  }
};

}  // namespace

absl::StatusOr<at::Tensor> PipeFusionSD3Forward(
    models::SD3Transformer2DModel& transformer,
    const models::SD3TransformerInputs& inputs, const PipeFusionStages& stages,
    int step) {
  return SD3StageModel(transformer, inputs).Run(stages, step);
}

SD3Pipeline::SD3Pipeline(
    std::shared_ptr<models::SD3Transformer2DModel> transformer,
    std::shared_ptr<models::AutoencoderKL> vae,
    schedulers::FlowMatchEulerConfig scheduler_config,
    models::Placement placement)
    : transformer_(std::move(transformer)),
      vae_(std::move(vae)),
      scheduler_config_(std::move(scheduler_config)),
      placement_(placement) {}

absl::StatusOr<std::unique_ptr<SD3Pipeline>> SD3Pipeline::Load(
    const std::string& dir, std::shared_ptr<models::Attention> attention,
    const models::Placement& placement,
    std::optional<models::BlockRange> blocks) {
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::SD3Transformer2DModel> transformer,
      models::LoadSD3Transformer2DModel(
          dir + "/transformer", std::move(attention), placement, blocks));
  ASSIGN_OR_RETURN(std::shared_ptr<models::AutoencoderKL> vae,
                   models::LoadAutoencoderKL(dir + "/vae", placement));
  const std::string scheduler_path = dir + "/scheduler/scheduler_config.json";
  ASSIGN_OR_RETURN(nlohmann::json scheduler_json,
                   base::ReadJsonFile(scheduler_path));
  ASSIGN_OR_RETURN(
      schedulers::FlowMatchEulerConfig scheduler_config,
      schedulers::ParseFlowMatchEulerConfig(scheduler_json, scheduler_path));
  const int64_t latent_channels = vae->config().latent_channels;
  if (transformer->config().in_channels != latent_channels) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": transformer in_channels ", transformer->config().in_channels,
        " must equal the VAE's latent_channels ", latent_channels));
  }
  return std::make_unique<SD3Pipeline>(std::move(transformer), std::move(vae),
                                       std::move(scheduler_config), placement);
}

c10::TensorOptions SD3Pipeline::options() const {
  return c10::TensorOptions().device(placement_.device).dtype(placement_.dtype);
}

absl::Status SD3Pipeline::CheckRequest(const SD3Request& request) const {
  const models::SD3TransformerConfig& config = transformer_->config();
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
  absl::Status status =
      models::CheckShape("prompt_embeds", request.prompt_embeds,
                         {batch, models::kAnySize, config.joint_attention_dim});
  status.Update(models::CheckShape("pooled_prompt_embeds",
                                   request.pooled_prompt_embeds,
                                   {batch, config.pooled_projection_dim}));
  if (!status.ok()) return status;
  if (request.guidance_scale > 1.0F) {
    status.Update(models::CheckShape(
        "negative_prompt_embeds", request.negative_prompt_embeds,
        {batch, request.prompt_embeds.size(1), config.joint_attention_dim}));
    status.Update(models::CheckShape("negative_pooled_prompt_embeds",
                                     request.negative_pooled_prompt_embeds,
                                     {batch, config.pooled_projection_dim}));
  }
  status.Update(CheckCfgSplit(request.cfg_split, request.guidance_scale));
  if (request.sequence_parallel.has_value() && request.stages.has_value()) {
    status.Update(absl::InvalidArgumentError(
        "the request has both sequence_parallel and stages; an SD3 denoise "
        "runs at most one of them (PipeFusion stages split the sequence "
        "themselves: PipeFusionStages::sp)"));
  }
  return status;
}

absl::StatusOr<schedulers::FlowMatchEulerDiscreteScheduler>
SD3Pipeline::Schedule(int64_t height, int64_t width,
                      int num_inference_steps) const {
  schedulers::FlowMatchEulerDiscreteScheduler scheduler(scheduler_config_);
  schedulers::TimestepOptions timestep_options;
  if (scheduler_config_.use_dynamic_shifting) {
    const int64_t patch = transformer_->config().patch_size;
    const int64_t image_tokens =
        (height / latent_scale() / patch) * (width / latent_scale() / patch);
    timestep_options.mu =
        schedulers::CalculateShift(image_tokens, scheduler_config_);
  }
  absl::Status status =
      scheduler.SetTimesteps(num_inference_steps, timestep_options);
  if (!status.ok()) return status;
  return scheduler;
}

absl::StatusOr<at::Tensor> SD3Pipeline::InitialLatents(
    const SD3Request& request) const {
  RETURN_IF_ERROR(CheckRequest(request));
  const int64_t channels = vae_->config().latent_channels;
  return base::Guarded(
      "SD3Pipeline initial latents", [&]() -> absl::StatusOr<at::Tensor> {
        std::vector<at::Tensor> images;
        for (uint64_t seed : request.seeds) {
          images.push_back(
              InitialNoise(seed, {1, channels, request.height / latent_scale(),
                                  request.width / latent_scale()}));
        }
        return at::cat(images, /*dim=*/0).to(options());
      });
}

absl::StatusOr<at::Tensor> SD3Pipeline::PredictNoise(const SD3Request& request,
                                                     const at::Tensor& latents,
                                                     const at::Tensor& timestep,
                                                     int step,
                                                     at::Tensor& raw) {
  const bool guided = request.guidance_scale > 1.0F;
  models::SD3TransformerInputs inputs;
  if (guided && !request.cfg_split.has_value()) {
    inputs.hidden_states = at::cat({latents, latents}, /*dim=*/0);
    inputs.encoder_hidden_states = at::cat(
        {request.negative_prompt_embeds, request.prompt_embeds}, /*dim=*/0);
    inputs.pooled_projections = at::cat(
        {request.negative_pooled_prompt_embeds, request.pooled_prompt_embeds},
        /*dim=*/0);
  } else {
    const bool negative = request.cfg_split.has_value() &&
                          request.cfg_split->branch == kNegativeBranch;
    inputs.hidden_states = latents;
    inputs.encoder_hidden_states =
        negative ? request.negative_prompt_embeds : request.prompt_embeds;
    inputs.pooled_projections = negative ? request.negative_pooled_prompt_embeds
                                         : request.pooled_prompt_embeds;
  }
  inputs.encoder_hidden_states = inputs.encoder_hidden_states.to(options());
  inputs.pooled_projections = inputs.pooled_projections.to(options());
  inputs.timestep =
      timestep.to(options()).expand({inputs.hidden_states.size(0)});
  absl::StatusOr<at::Tensor> output;
  if (request.sequence_parallel.has_value()) {
    output =
        ShardedSD3Forward(*transformer_, inputs, *request.sequence_parallel);
  } else if (request.stages.has_value()) {
    output = PipeFusionSD3Forward(*transformer_, inputs, *request.stages, step);
  } else {
    output = transformer_->Forward(inputs);
  }
  if (!output.ok()) return output.status();
  if (request.cfg_split.has_value()) {
    output = ExchangeBranches(*request.cfg_split, *output);
    if (!output.ok()) return output.status();
  }
  raw = *output;
  if (!guided) return raw;
  const std::vector<at::Tensor> halves = raw.chunk(2, /*dim=*/0);
  return halves[0] + request.guidance_scale * (halves[1] - halves[0]);
}

absl::StatusOr<at::Tensor> SD3Pipeline::Denoise(
    const SD3Request& request, at::Tensor latents,
    const SD3StepObserver& observer) {
  RETURN_IF_ERROR(CheckRequest(request));
  RETURN_IF_ERROR(models::CheckShape(
      "latents", latents,
      {static_cast<int64_t>(request.seeds.size()),
       vae_->config().latent_channels, request.height / latent_scale(),
       request.width / latent_scale()}));
  ASSIGN_OR_RETURN(
      schedulers::FlowMatchEulerDiscreteScheduler scheduler,
      Schedule(request.height, request.width, request.num_inference_steps));
  torch::NoGradGuard no_grad;
  return base::Guarded(
      "SD3Pipeline denoise", [&]() -> absl::StatusOr<at::Tensor> {
        for (int step = 0; step < request.num_inference_steps; ++step) {
          const at::Tensor timestep = scheduler.timesteps()[step];
          at::Tensor raw;
          ASSIGN_OR_RETURN(at::Tensor noise,
                           PredictNoise(request, latents, timestep, step, raw));
          ASSIGN_OR_RETURN(schedulers::StepOutput stepped,
                           scheduler.Step(noise, latents));
          latents = stepped.prev_sample.to(latents.scalar_type());
          if (observer) {
            absl::Status status = observer(SD3StepEvent{
                step, request.num_inference_steps, timestep, raw, latents});
            if (!status.ok()) return status;
          }
        }
        return latents;
      });
}

absl::StatusOr<SD3DecodeOutput> SD3Pipeline::Decode(const at::Tensor& latents) {
  RETURN_IF_ERROR(
      models::CheckShape("latents", latents,
                         {models::kAnySize, vae_->config().latent_channels,
                          models::kAnySize, models::kAnySize}));
  torch::NoGradGuard no_grad;
  return base::Guarded(
      "SD3Pipeline decode", [&]() -> absl::StatusOr<SD3DecodeOutput> {
        const models::AutoencoderKLConfig& config = vae_->config();
        SD3DecodeOutput out;
        out.vae_input =
            latents / config.scaling_factor + config.shift_factor.value_or(0.0);
        ASSIGN_OR_RETURN(at::Tensor raw, vae_->Decode(out.vae_input));
        out.images = PostprocessDecoded(raw);
        return out;
      });
}

absl::StatusOr<SD3DecodeOutput> SD3Pipeline::Generate(
    const SD3Request& request, const SD3StepObserver& observer) {
  ASSIGN_OR_RETURN(at::Tensor latents, InitialLatents(request));
  ASSIGN_OR_RETURN(at::Tensor denoised,
                   Denoise(request, std::move(latents), observer));
  return Decode(denoised);
}

}  // namespace ditserve::pipelines
