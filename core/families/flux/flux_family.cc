#include "core/families/flux/flux_family.h"

#include <torch/torch.h>

#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/families/flux/flux_checkpoint.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/flux/flux_latents.h"
#include "core/families/flux/flux_pipeline_stages.h"
#include "core/families/flux/flux_prompt_encoder.h"
#include "core/families/flux/flux_sequence_parallel.h"
#include "core/families/flux/flux_transformer_loader.h"
#include "core/families/latent_grid.h"
#include "core/models/kept_for_key.h"
#include "core/models/vae/autoencoder_kl.h"
#include "core/schedulers/flow_match_euler.h"
#include "core/schedulers/load_scheduler.h"
#include "core/schedulers/numpy_compat.h"

namespace ditserve::families {
namespace {

// The transformer takes timesteps and guidance divided by this.
constexpr double kTimestepScale = 1000.0;

class FluxForward final : public BoundForward {
 public:
  FluxForward(models::FluxTransformer2DModel& transformer,
              models::FluxTransformerInputs inputs)
      : transformer_(transformer), inputs_(std::move(inputs)) {}

  absl::StatusOr<at::Tensor> Whole() override {
    return transformer_.Forward(inputs_);
  }
  absl::StatusOr<at::Tensor> Sharded(
      const parallel::SequenceParallel& sequence_parallel) override {
    return families::ShardedFluxForward(transformer_, inputs_,
                                        sequence_parallel);
  }
  absl::StatusOr<at::Tensor> Staged(const parallel::PipeFusionStages& stages,
                                    int step) override {
    return families::FluxStageForward(transformer_, inputs_, stages, step);
  }

 private:
  models::FluxTransformer2DModel& transformer_;
  models::FluxTransformerInputs inputs_;
};

class FluxModel final
    : public LatentGridModel<families::FluxPromptEncoder,
                             models::FluxTransformer2DModel,
                             schedulers::FlowMatchEulerConfig> {
 public:
  using LatentGridModel::LatentGridModel;

  GuidanceRule guidance_rule() const override {
    return GuidanceRule::kEmbedded;
  }

  absl::StatusOr<Conditioning> EncodePrompts(
      const std::vector<std::string>& prompts,
      int max_sequence_length) override {
    ASSIGN_OR_RETURN(families::FluxPromptEncoder * prompt_encoder, encoder());
    ASSIGN_OR_RETURN(families::FluxPromptEmbeddings embeddings,
                     prompt_encoder->Encode(prompts, max_sequence_length));
    return Conditioning{
        .states = embeddings.prompt_embeds,
        .pooled = embeddings.pooled_prompt_embeds,
        .token_ids = {{"clip_input_ids", embeddings.clip_input_ids},
                      {"t5_input_ids", embeddings.t5_input_ids}}};
  }

  absl::Status CheckRequest(const GenerationRequest& request) const override {
    const models::FluxTransformerConfig& config = model().config();
    absl::Status status =
        CheckConditioning(request, guidance_rule(),
                          {.states = config.joint_attention_dim,
                           .pooled = config.pooled_projection_dim});
    status.Update(Grid(request).status());
    return status;
  }

  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> Schedule(
      const GenerationRequest& request) const override {
    ASSIGN_OR_RETURN(families::FluxLatentGrid grid, Grid(request));
    const int steps = request.num_inference_steps;
    auto scheduler =
        std::make_unique<schedulers::FlowMatchEulerDiscreteScheduler>(
            scheduler_config());
    schedulers::TimestepOptions options;
    options.sigmas = schedulers::Linspace(1.0, 1.0 / steps, steps);
    options.mu = schedulers::CalculateShift(grid.tokens(), scheduler_config());
    RETURN_IF_ERROR(scheduler->SetTimesteps(steps, options));
    return scheduler;
  }

  at::Tensor PackLatents(const at::Tensor& noise) const override {
    return families::PackLatents(noise).to(options());
  }

  at::Tensor UnpackLatents(const at::Tensor& packed,
                           const GenerationRequest& request) const override {
    return families::UnpackLatents(packed, *Grid(request));
  }

  std::vector<int64_t> LatentsShape(
      const GenerationRequest& request) const override {
    // 2×2 patches of the latent grid, each 4 × latent_channels wide.
    return {request.batch(), Grid(request)->tokens(),
            4 * vae().config().latent_channels};
  }

  absl::StatusOr<std::unique_ptr<BoundForward>> BindForward(
      const GenerationRequest& request, const at::Tensor& latents,
      const at::Tensor& timestep, const Conditioning& text) override {
    ASSIGN_OR_RETURN(families::FluxLatentGrid grid, Grid(request));
    const int64_t batch = latents.size(0);
    models::FluxTransformerInputs inputs;
    inputs.hidden_states = latents;
    inputs.encoder_hidden_states = text.states.to(options());
    inputs.pooled_projections = text.pooled.to(options());
    const PositionIds ids = PositionIdsFor(grid, text.states.size(1));
    inputs.img_ids = ids.image;
    inputs.txt_ids = ids.text;
    inputs.timestep =
        timestep.expand({batch}).to(latents.scalar_type()) / kTimestepScale;
    if (model().config().guidance_embeds) {
      inputs.guidance =
          at::full(
              {1}, request.guidance_scale,
              at::TensorOptions().device(placement().device).dtype(at::kFloat))
              .expand({batch});
    }
    return std::make_unique<FluxForward>(model(), std::move(inputs));
  }

  ModelDimensions dimensions() const override {
    const models::FluxTransformerConfig& config = model().config();
    return ModelDimensions{
        .hidden_size = static_cast<int>(config.inner_dim()),
        .token_output_channels = static_cast<int>(config.output_channels())};
  }
  int64_t total_blocks() const override {
    return model().config().total_blocks();
  }

 private:
  // The RoPE position ids of one grid and text length, made once for every
  // step of a generation rather than per forward.
  struct PositionIds {
    at::Tensor image;
    at::Tensor text;
  };
  PositionIds PositionIdsFor(const families::FluxLatentGrid& grid,
                             int64_t text_tokens) {
    return ids_.Get(std::make_tuple(grid.height, grid.width, text_tokens), [&] {
      return PositionIds{families::LatentImageIds(grid, options()),
                         families::TextIds(text_tokens, options())};
    });
  }

  absl::StatusOr<families::FluxLatentGrid> Grid(
      const GenerationRequest& request) const {
    return families::LatentGridFor(request.height, request.width,
                                   vae().config().scale_factor());
  }

  // Keyed by the grid's height and width and the text's tokens.
  models::KeptForKey<std::tuple<int64_t, int64_t, int64_t>, PositionIds> ids_;
};

class Flux final : public Family {
 public:
  std::vector<config::ModelDefaults> serves() const override {
    return {kFluxDevDefaults, kFluxSchnellDefaults};
  }
  std::vector<std::string> pipeline_classes() const override {
    return {"FluxPipeline"};
  }

  absl::StatusOr<config::ModelSpec> Detect(
      const config::CheckpointConfigs& configs) const override {
    config::ModelSpec spec = configs.spec;
    spec.defaults = configs.transformer.value("guidance_embeds", false)
                        ? kFluxDevDefaults
                        : kFluxSchnellDefaults;
    ASSIGN_OR_RETURN(int single, config::PositiveInt(configs.transformer,
                                                     "num_single_layers",
                                                     configs.transformer_path));
    spec.num_layers += single;
    // The transformer sees 2×2-packed latents (patch_size 1 in its config);
    // the packing is the effective patch.
    spec.patch_size *= 2;
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
    ASSIGN_OR_RETURN(models::FluxTransformerConfig config,
                     models::ReadFluxTransformerConfig(
                         model_dir + "/transformer/config.json"));
    return models::FluxStageBlocks(config, stage, stages);
  }

  absl::Status WriteRandomCheckpoint(
      const config::ModelDefaults& model, checkpoints::CheckpointPreset preset,
      uint64_t seed, const std::string& out_dir) const override {
    return checkpoints::WriteFluxCheckpoint(model, preset, seed, out_dir);
  }

  absl::StatusOr<std::unique_ptr<FamilyModel>> Load(
      const std::string& model_dir, const LoadOptions& options) const override {
    std::unique_ptr<families::FluxPromptEncoder> encoder;
    if (options.prompt_encoders) {
      ASSIGN_OR_RETURN(encoder, families::FluxPromptEncoder::Load(
                                    model_dir, options.placement));
    }
    ASSIGN_OR_RETURN(
        std::shared_ptr<models::FluxTransformer2DModel> transformer,
        models::LoadFluxTransformer2DModel(model_dir + "/transformer",
                                           options.attention, options.placement,
                                           options.blocks));
    ASSIGN_OR_RETURN(VaeAndScheduler rest,
                     LoadVaeAndScheduler(model_dir, options.placement));
    ASSIGN_OR_RETURN(schedulers::FlowMatchEulerConfig scheduler_config,
                     schedulers::LoadFlowMatchEulerConfig(rest.scheduler_json,
                                                          rest.scheduler_path));
    const int64_t latent_channels = rest.vae->config().latent_channels;
    if (transformer->config().in_channels != 4 * latent_channels) {
      return absl::InvalidArgumentError(
          absl::StrCat(model_dir, ": transformer in_channels ",
                       transformer->config().in_channels,
                       " must be 4 x the VAE's latent_channels ",
                       latent_channels, " (2x2 packing)"));
    }
    return std::make_unique<FluxModel>(
        std::move(encoder), std::move(transformer), std::move(rest.vae),
        std::move(scheduler_config), options.placement);
  }
};

}  // namespace

const Family& FluxFamily() {
  static const Flux* const family = new Flux();
  return *family;
}

}  // namespace ditserve::families
