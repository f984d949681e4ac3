#include "core/families/sd3/sd3_family.h"

#include <torch/torch.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/config/checkpoint_spec.h"
#include "core/families/latent_grid.h"
#include "core/families/sd3/sd3_checkpoint.h"
#include "core/families/sd3/sd3_defaults.h"
#include "core/families/sd3/sd3_prompt_encoder.h"
#include "core/families/sd3/sd3_transformer_2d_model.h"
#include "core/parallel/latent_stage_model.h"
#include "core/schedulers/flow_match_euler.h"
#include "core/schedulers/load_scheduler.h"

namespace ditserve::families {
namespace {

// An SD3 stage for one forward's inputs: the image and text streams travel;
// the attention sequence is [image, text].
class SD3StageModel final
    : public parallel::LatentStageModel<models::SD3Transformer2DModel,
                                        models::SD3TransformerInputs> {
 public:
  using LatentStageModel::LatentStageModel;

  int64_t text_tokens() const override {
    return inputs().encoder_hidden_states.size(1);
  }

  at::Tensor AttentionRows(const parallel::StagePatch& patch) const override {
    return at::cat(
        {patch.image.begin + at::arange(patch.image.tokens, at::kLong),
         image_tokens() +
             at::arange(patch.text ? text_tokens() : 0, at::kLong)});
  }

  absl::StatusOr<parallel::StageStreams> Forward(
      const parallel::StagePatch& patch,
      const std::optional<parallel::StageStreams>& incoming) override {
    std::optional<models::SD3Streams> streams;
    if (incoming.has_value()) {
      streams =
          models::SD3Streams{.image = incoming->image, .text = incoming->text};
    }
    models::SD3TransformerInputs patch_inputs = inputs();
    if (!patch.text) {
      patch_inputs.encoder_hidden_states =
          inputs().encoder_hidden_states.narrow(1, 0, 0);
    }
    ASSIGN_OR_RETURN(
        models::SD3Streams out,
        transformer().ForwardStage(patch_inputs, patch.image, streams));
    return parallel::StageStreams{.image = out.image, .text = out.text};
  }
};

class SD3Model final
    : public LatentGridModel<families::SD3PromptEncoder,
                             models::SD3Transformer2DModel,
                             schedulers::FlowMatchEulerConfig> {
 public:
  using LatentGridModel::LatentGridModel;

  GuidanceRule guidance_rule() const override {
    return GuidanceRule::kClassifierFree;
  }

  absl::StatusOr<Conditioning> EncodePrompts(
      const std::vector<std::string>& prompts,
      int max_sequence_length) override {
    ASSIGN_OR_RETURN(families::SD3PromptEncoder * prompt_encoder, encoder());
    ASSIGN_OR_RETURN(families::SD3PromptEmbeds embeds,
                     prompt_encoder->Encode(prompts, max_sequence_length));
    return Conditioning{.states = embeds.prompt_embeds,
                        .pooled = embeds.pooled_prompt_embeds};
  }

  absl::Status CheckRequest(const GenerationRequest& request) const override {
    const models::SD3TransformerConfig& config = model().config();
    RETURN_IF_ERROR(CheckLatentGridSize(request, vae(), config.patch_size));
    return CheckConditioning(request, guidance_rule(),
                             {.states = config.joint_attention_dim,
                              .pooled = config.pooled_projection_dim});
  }

  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> Schedule(
      const GenerationRequest& request) const override {
    auto scheduler =
        std::make_unique<schedulers::FlowMatchEulerDiscreteScheduler>(
            scheduler_config());
    schedulers::TimestepOptions options;
    if (scheduler_config().use_dynamic_shifting) {
      const int64_t pixels_per_token =
          vae().config().scale_factor() * model().config().patch_size;
      const int64_t image_tokens = (request.height / pixels_per_token) *
                                   (request.width / pixels_per_token);
      options.mu = schedulers::CalculateShift(image_tokens, scheduler_config());
    }
    RETURN_IF_ERROR(
        scheduler->SetTimesteps(request.num_inference_steps, options));
    return scheduler;
  }

  absl::StatusOr<std::unique_ptr<BoundForward>> BindForward(
      const GenerationRequest& /*request*/, const at::Tensor& latents,
      const at::Tensor& timestep, const Conditioning& text) override {
    models::SD3TransformerInputs inputs;
    inputs.hidden_states = latents;
    inputs.encoder_hidden_states = text.states.to(options());
    inputs.pooled_projections = text.pooled.to(options());
    // Kept in float32, as diffusers keeps it: the sinusoidal features are
    // computed from it before the cast to the model's dtype.
    inputs.timestep = timestep.to(options().device()).expand({latents.size(0)});
    return BindSD3Forward(model(), std::move(inputs));
  }

  ModelDimensions dimensions() const override {
    const models::SD3TransformerConfig& config = model().config();
    return ModelDimensions{
        .hidden_size = static_cast<int>(config.inner_dim()),
        .transformer_out_channels = static_cast<int>(config.out_channels),
        .token_output_channels =
            static_cast<int>(config.token_output_channels())};
  }
  int64_t total_blocks() const override { return model().config().num_layers; }
};

class SD3 final : public Family {
 public:
  std::vector<config::ModelDefaults> serves() const override {
    return {kSD3MediumDefaults};
  }
  std::vector<std::string> pipeline_classes() const override {
    return {"StableDiffusion3Pipeline"};
  }

  absl::StatusOr<config::ModelSpec> Detect(
      const config::CheckpointConfigs& configs) const override {
    config::ModelSpec spec = configs.spec;
    spec.defaults = kSD3MediumDefaults;
    // diffusers' default size: the transformer's sample_size in pixels.
    ASSIGN_OR_RETURN(const int sample_size,
                     config::PositiveInt(configs.transformer, "sample_size",
                                         configs.transformer_path));
    spec.defaults.height = spec.defaults.width =
        sample_size * spec.vae_scale_factor;
    // The patch grid's positions are cropped from a square table of this
    // many patches a side: Freeze refuses a larger side, naming it, which
    // every rank's transformer would otherwise refuse after the queue.
    ASSIGN_OR_RETURN(
        const int table_patches,
        config::PositiveInt(configs.transformer, "pos_embed_max_size",
                            configs.transformer_path));
    spec.max_height = spec.max_width =
        table_patches * spec.patch_size * spec.vae_scale_factor;
    RETURN_IF_ERROR(DetectAutoencoderKLTiles(configs, spec));
    return spec;
  }

  int64_t RequestBytes(const v1::InputConfig& config,
                       const config::ModelSpec& spec) const override {
    return LatentGridRequestBytes(config, spec);
  }

  absl::StatusOr<models::BlockRange> StageBlocks(const std::string& model_dir,
                                                 int stage,
                                                 int stages) const override {
    ASSIGN_OR_RETURN(models::SD3TransformerConfig config,
                     models::ReadSD3TransformerConfig(
                         model_dir + "/transformer/config.json"));
    return models::SD3Transformer2DModel::StageBlocks(config, stage, stages);
  }

  absl::Status WriteRandomCheckpoint(
      const config::ModelDefaults& /*model*/,
      checkpoints::CheckpointPreset preset, uint64_t seed,
      const std::string& out_dir) const override {
    return checkpoints::WriteSD3Checkpoint(preset, seed, out_dir);
  }

  absl::StatusOr<std::unique_ptr<FamilyModel>> Load(
      const std::string& model_dir, const LoadOptions& options) const override {
    ASSIGN_OR_RETURN(std::shared_ptr<models::SD3Transformer2DModel> transformer,
                     models::LoadSD3Transformer2DModel(
                         model_dir + "/transformer", options.attention,
                         options.placement, options.blocks));
    ASSIGN_OR_RETURN(VaeAndScheduler rest,
                     LoadVaeAndScheduler(model_dir, options.placement));
    ASSIGN_OR_RETURN(schedulers::FlowMatchEulerConfig scheduler_config,
                     schedulers::LoadFlowMatchEulerConfig(rest.scheduler_json,
                                                          rest.scheduler_path));
    const int64_t latent_channels = rest.vae->config().latent_channels;
    if (transformer->config().in_channels != latent_channels) {
      return absl::InvalidArgumentError(absl::StrCat(
          model_dir, ": transformer in_channels ",
          transformer->config().in_channels,
          " must equal the VAE's latent_channels ", latent_channels));
    }
    std::unique_ptr<families::SD3PromptEncoder> encoder;
    if (options.prompt_encoders) {
      ASSIGN_OR_RETURN(encoder,
                       families::SD3PromptEncoder::Load(
                           model_dir, transformer->config().joint_attention_dim,
                           options.placement));
    }
    return std::make_unique<SD3Model>(
        std::move(encoder), std::move(transformer), std::move(rest.vae),
        std::move(scheduler_config), options.placement);
  }
};

}  // namespace

std::unique_ptr<BoundForward> BindSD3Forward(
    models::SD3Transformer2DModel& transformer,
    models::SD3TransformerInputs inputs) {
  // The attention sequence is [image, text].
  const int64_t text_tokens = inputs.encoder_hidden_states.size(1);
  return std::make_unique<
      LatentGridForward<models::SD3Transformer2DModel,
                        models::SD3TransformerInputs, SD3StageModel>>(
      transformer, std::move(inputs), text_tokens);
}

const Family& SD3Family() {
  static const SD3* const family = new SD3();
  return *family;
}

}  // namespace ditserve::families
