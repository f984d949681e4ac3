#include "core/families/pixart/pixart_family.h"

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/families/latent_grid.h"
#include "core/families/pixart/pixart_checkpoint.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/pixart/pixart_transformer_2d_model.h"
#include "core/families/pixart/resolution_binning.h"
#include "core/models/text/t5_prompt_encoder.h"
#include "core/parallel/latent_stage_model.h"
#include "core/schedulers/load_scheduler.h"
#include "core/tokenizers/python_text.h"

namespace ditserve::families {
namespace {

// A PixArt stage for one forward's inputs: only the image stream travels;
// the attention sequence is the image tokens.
class PixArtStageModel final
    : public parallel::LatentStageModel<models::PixArtTransformer2DModel,
                                        models::PixArtTransformerInputs> {
 public:
  using LatentStageModel::LatentStageModel;

  int64_t text_tokens() const override { return 0; }

  at::Tensor AttentionRows(const parallel::StagePatch& patch) const override {
    return patch.image.begin + at::arange(patch.image.tokens, at::kLong);
  }

  absl::StatusOr<parallel::StageStreams> Forward(
      const parallel::StagePatch& patch,
      const std::optional<parallel::StageStreams>& incoming) override {
    std::optional<at::Tensor> image;
    if (incoming.has_value()) image = incoming->image;
    ASSIGN_OR_RETURN(at::Tensor out,
                     transformer().ForwardStage(inputs(), patch.image, image));
    return parallel::StageStreams{.image = out};
  }
};

class PixArtModel final
    : public LatentGridModel<models::T5PromptEncoder,
                             models::PixArtTransformer2DModel, nlohmann::json> {
 public:
  using LatentGridModel::LatentGridModel;

  GuidanceRule guidance_rule() const override {
    return GuidanceRule::kClassifierFree;
  }

  absl::StatusOr<Conditioning> EncodePrompts(
      const std::vector<std::string>& prompts,
      int max_sequence_length) override {
    ASSIGN_OR_RETURN(models::T5PromptEncoder * prompt_encoder, encoder());
    // PixArt's pipelines lower-case and strip every prompt, negative ones
    // too (_text_preprocessing; its clean_caption, which needs bs4 and ftfy,
    // is not reproduced). T5's vocabulary tells the cases apart.
    std::vector<std::string> captions;
    for (const std::string& prompt : prompts) {
      captions.push_back(tokenizers::PythonLowerStrip(prompt));
    }
    // The transformer's cross-attention masks the padding again.
    ASSIGN_OR_RETURN(models::T5PromptStates text,
                     prompt_encoder->Encode(captions, max_sequence_length,
                                            models::T5Padding::kMasked));
    return Conditioning{.states = text.states, .mask = text.mask};
  }

  absl::Status CheckRequest(const GenerationRequest& request) const override {
    const models::PixArtTransformerConfig& config = model().config();
    RETURN_IF_ERROR(CheckLatentGridSize(request, vae(), config.patch_size));
    return CheckConditioning(request, guidance_rule(),
                             {.states = config.caption_channels, .mask = true});
  }

  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> Schedule(
      const GenerationRequest& request) const override {
    ASSIGN_OR_RETURN(
        std::unique_ptr<schedulers::Scheduler> scheduler,
        schedulers::MakeScheduler(scheduler_config(), "scheduler_config.json"));
    RETURN_IF_ERROR(scheduler->SetTimesteps(request.num_inference_steps));
    return scheduler;
  }

  absl::StatusOr<std::unique_ptr<BoundForward>> BindForward(
      const GenerationRequest& request, const at::Tensor& latents,
      const at::Tensor& timestep, const Conditioning& text) override {
    models::PixArtTransformerInputs inputs;
    inputs.hidden_states = latents;
    inputs.encoder_hidden_states = text.states.to(options());
    inputs.encoder_attention_mask = text.mask.to(placement().device);
    const int64_t model_batch = latents.size(0);
    inputs.timestep = timestep.to(placement().device).expand({model_batch});
    if (model().config().use_additional_conditions) {
      const double height = static_cast<double>(request.height);
      const double width = static_cast<double>(request.width);
      inputs.micro_conditions = models::PixArtMicroConditions{
          at::tensor({height, width}, options()).repeat({model_batch, 1}),
          at::tensor({height / width}, options()).repeat({model_batch, 1})};
    }
    return BindPixArtForward(model(), std::move(inputs));
  }

  at::Tensor NoiseOf(const at::Tensor& output) const override {
    if (model().config().out_channels == 2 * vae().config().latent_channels) {
      // Learned sigma: the first half of the channels is the noise.
      return output.chunk(2, /*dim=*/1)[0];
    }
    return output;
  }

  bool one_step_takes_clean_sample() const override { return true; }

  absl::StatusOr<DecodeOutput> Decode(const at::Tensor& latents,
                                      const DecodeRequest& output) override {
    ASSIGN_OR_RETURN(DecodeOutput decoded,
                     DecodeLatents(vae(), latents, output.vae_tiling));
    const at::Tensor& raw = decoded.images.raw;
    if (raw.size(2) != output.height || raw.size(3) != output.width) {
      decoded.images = models::PostprocessDecoded(families::ResizeAndCenterCrop(
          raw, config::ImageSize{output.height, output.width}));
    }
    return decoded;
  }

  ModelDimensions dimensions() const override {
    const models::PixArtTransformerConfig& config = model().config();
    return ModelDimensions{
        .hidden_size = static_cast<int>(config.inner_dim()),
        .transformer_out_channels = static_cast<int>(config.out_channels),
        .token_output_channels =
            static_cast<int>(config.token_output_channels()),
        .stages_pass_text_stream = false};
  }
  int64_t total_blocks() const override { return model().config().num_layers; }
};

class PixArt final : public Family {
 public:
  std::vector<config::ModelDefaults> serves() const override {
    return {kPixArtAlphaDefaults, kPixArtSigmaDefaults};
  }
  std::vector<std::string> pipeline_classes() const override {
    return {"PixArtAlphaPipeline", "PixArtSigmaPipeline"};
  }

  absl::StatusOr<config::ModelSpec> Detect(
      const config::CheckpointConfigs& configs) const override {
    config::ModelSpec spec = configs.spec;
    spec.defaults = configs.pipeline_class == "PixArtAlphaPipeline"
                        ? kPixArtAlphaDefaults
                        : kPixArtSigmaDefaults;
    // It picks the resolution-binning table.
    ASSIGN_OR_RETURN(spec.sample_size,
                     config::PositiveInt(configs.transformer, "sample_size",
                                         configs.transformer_path));
    // diffusers' default size is the trained one: 512² for
    // PixArt-Sigma-XL-2-512-MS, 2048² for its 2K model.
    spec.defaults.height = spec.defaults.width =
        spec.sample_size * spec.vae_scale_factor;
    RETURN_IF_ERROR(DetectAutoencoderKLTiles(configs, spec));
    DetectStepCheck(configs, schedulers::MakeScheduler, spec);
    return spec;
  }

  int64_t RequestBytes(const v1::InputConfig& config,
                       const config::ModelSpec& spec) const override {
    return LatentGridRequestBytes(config, spec);
  }

  absl::StatusOr<models::BlockRange> StageBlocks(const std::string& model_dir,
                                                 int stage,
                                                 int stages) const override {
    ASSIGN_OR_RETURN(models::PixArtTransformerConfig config,
                     models::ReadPixArtTransformerConfig(
                         model_dir + "/transformer/config.json"));
    // PixArt's blocks are alike: equal weights, equal counts.
    return models::SplitBlocksByWeight(
        std::vector<int64_t>(config.num_layers, 1), stage, stages);
  }

  absl::Status WriteRandomCheckpoint(
      const config::ModelDefaults& model, checkpoints::CheckpointPreset preset,
      uint64_t seed, const std::string& out_dir) const override {
    return checkpoints::WritePixArtCheckpoint(model, preset, seed, out_dir);
  }

  absl::StatusOr<std::unique_ptr<FamilyModel>> Load(
      const std::string& model_dir, const LoadOptions& options) const override {
    std::unique_ptr<models::T5PromptEncoder> encoder;
    if (options.prompt_encoders) {
      ASSIGN_OR_RETURN(
          encoder, models::T5PromptEncoder::Load(model_dir, options.placement));
    }
    ASSIGN_OR_RETURN(
        std::shared_ptr<models::PixArtTransformer2DModel> transformer,
        models::LoadPixArtTransformer2DModel(
            model_dir + "/transformer", options.attention, options.placement,
            options.blocks));
    ASSIGN_OR_RETURN(VaeAndScheduler rest,
                     LoadVaeAndScheduler(model_dir, options.placement));
    // Fail at load, not at the first request, on a scheduler we cannot build.
    RETURN_IF_ERROR(
        schedulers::MakeScheduler(rest.scheduler_json, rest.scheduler_path)
            .status());
    const models::PixArtTransformerConfig& config = transformer->config();
    const int64_t latent_channels = rest.vae->config().latent_channels;
    if (config.in_channels != latent_channels ||
        (config.out_channels != latent_channels &&
         config.out_channels != 2 * latent_channels)) {
      return absl::InvalidArgumentError(absl::StrCat(
          model_dir, ": transformer in_channels ", config.in_channels,
          " and out_channels ", config.out_channels,
          " do not fit the VAE's latent_channels ", latent_channels,
          " (expected in = latent, out = latent or 2 x latent for learned "
          "sigma)"));
    }
    return std::make_unique<PixArtModel>(
        std::move(encoder), std::move(transformer), std::move(rest.vae),
        std::move(rest.scheduler_json), options.placement);
  }
};

}  // namespace

std::unique_ptr<BoundForward> BindPixArtForward(
    models::PixArtTransformer2DModel& transformer,
    models::PixArtTransformerInputs inputs) {
  // The attention sequence is the image tokens alone.
  return std::make_unique<
      LatentGridForward<models::PixArtTransformer2DModel,
                        models::PixArtTransformerInputs, PixArtStageModel>>(
      transformer, std::move(inputs), /*trailing_tokens=*/0);
}

const Family& PixArtFamily() {
  static const PixArt* const family = new PixArt();
  return *family;
}

}  // namespace ditserve::families
