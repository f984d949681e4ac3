#include "core/families/cogvideox/cogvideox_family.h"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/config/derived_shapes.h"
#include "core/families/cogvideox/cogvideox_checkpoint.h"
#include "core/families/cogvideox/cogvideox_ddim_scheduler.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/families/cogvideox/cogvideox_dpm_scheduler.h"
#include "core/families/cogvideox/cogvideox_pipefusion.h"
#include "core/families/cogvideox/cogvideox_transformer_3d_model.h"
#include "core/families/cogvideox/cogvideox_vae_decoder.h"
#include "core/families/cogvideox/cogvideox_vae_frame_batches.h"
#include "core/families/latent_grid.h"
#include "core/families/request_memory.h"
#include "core/models/decoded_images.h"
#include "core/models/tensor_checks.h"
#include "core/models/text/t5_prompt_encoder.h"

namespace ditserve::families {
namespace {

// A fresh scheduler of the folder's class.
absl::StatusOr<std::unique_ptr<CogVideoXSchedulerBase>> MakeCogVideoXScheduler(
    const nlohmann::json& json, const std::string& path) {
  ASSIGN_OR_RETURN(CogVideoXSchedulerConfig config,
                   ParseCogVideoXSchedulerConfig(json, path));
  const std::string class_name = json.value("_class_name", "");
  if (class_name == "CogVideoXDDIMScheduler") {
    return std::make_unique<CogVideoXDDIMScheduler>(std::move(config));
  }
  if (class_name == "CogVideoXDPMScheduler") {
    return std::make_unique<CogVideoXDPMScheduler>(std::move(config));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": _class_name \"", class_name,
                   "\" is not a CogVideoX scheduler; expected "
                   "CogVideoXDDIMScheduler or CogVideoXDPMScheduler"));
}

// One forward: whole, over this rank's shard of the joint sequence
// [text | video], or through this rank's PipeFusion stage.
class CogVideoXForward final : public BoundForward {
 public:
  CogVideoXForward(CogVideoXTransformer3DModel& transformer,
                   CogVideoXTransformerInputs inputs)
      : transformer_(transformer), inputs_(std::move(inputs)) {}

  absl::StatusOr<at::Tensor> Whole() override {
    return transformer_.Forward(inputs_);
  }

  absl::StatusOr<at::Tensor> Sharded(
      const parallel::SequenceParallel& sequence_parallel) override {
    const at::Tensor& latents = inputs_.hidden_states;
    ASSIGN_OR_RETURN(VideoTokenGrid grid,
                     TokenGridOf(transformer_.config(), latents.size(1),
                                 latents.size(3), latents.size(4)));
    const int64_t text_tokens = inputs_.encoder_hidden_states.size(1);
    ASSIGN_OR_RETURN(
        at::Tensor gathered,
        parallel::GatherShardedForward(
            sequence_parallel, latents.size(0), text_tokens + grid.tokens(),
            latents.device(), [this](const models::SequenceShard& shard) {
              return transformer_.ForwardShard(inputs_, shard);
            }));
    return transformer_.Unpatchify(gathered.slice(1, text_tokens), grid);
  }

  absl::StatusOr<at::Tensor> Staged(const parallel::PipeFusionStages& stages,
                                    int step) override {
    return CogVideoXStagedForward(transformer_, inputs_, stages, step);
  }

 private:
  CogVideoXTransformer3DModel& transformer_;
  CogVideoXTransformerInputs inputs_;
};

class CogVideoXModel final : public FamilyModel {
 public:
  CogVideoXModel(std::unique_ptr<models::T5PromptEncoder> encoder,
                 std::shared_ptr<CogVideoXTransformer3DModel> transformer,
                 std::shared_ptr<AutoencoderKLCogVideoX> vae,
                 nlohmann::json scheduler_json, std::string scheduler_path,
                 models::Placement placement)
      : encoder_(std::move(encoder)),
        transformer_(std::move(transformer)),
        vae_(std::move(vae)),
        scheduler_json_(std::move(scheduler_json)),
        scheduler_path_(std::move(scheduler_path)),
        placement_(placement) {}

  GuidanceRule guidance_rule() const override {
    return GuidanceRule::kClassifierFree;
  }

  bool guides_in_float32() const override { return true; }

  absl::StatusOr<Conditioning> EncodePrompts(
      const std::vector<std::string>& prompts,
      int max_sequence_length) override {
    if (encoder_ == nullptr) return NoPromptEncoders();
    // CogVideoXPipeline runs T5 without a mask, and the transformer
    // attends to the padding's states too.
    ASSIGN_OR_RETURN(models::T5PromptStates text,
                     encoder_->Encode(prompts, max_sequence_length,
                                      models::T5Padding::kAttended));
    return Conditioning{.states = text.states};
  }

  absl::Status CheckRequest(const GenerationRequest& request) const override {
    const CogVideoXTransformerConfig& config = transformer_->config();
    const int64_t multiple = vae_->config().scale_factor() * config.patch_size;
    for (const auto& [name, value] :
         {std::pair<const char*, int64_t>{"height", request.height},
          std::pair<const char*, int64_t>{"width", request.width}}) {
      if (value <= 0 || value % multiple != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, " ", value, " is not a positive multiple of ", multiple,
            " (VAE scale ", vae_->config().scale_factor(), " × patch ",
            config.patch_size, ")"));
      }
    }
    // The VAE decodes an odd number of latent frames to
    // compression × (latent frames - 1) + 1 frames; an even number would
    // decode to more frames than asked for.
    const int64_t step = 2 * vae_->config().temporal_compression_ratio;
    if ((request.frames - 1) % step != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("frames ", request.frames, " is not ", step,
                       " × N + 1 (an odd number of latent frames, each ",
                       vae_->config().temporal_compression_ratio,
                       " frames after the first)"));
    }
    return CheckConditioning(request, guidance_rule(),
                             {.states = config.text_embed_dim});
  }

  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> Schedule(
      const GenerationRequest& request) const override {
    ASSIGN_OR_RETURN(std::unique_ptr<CogVideoXSchedulerBase> scheduler,
                     MakeCogVideoXScheduler(scheduler_json_, scheduler_path_));
    RETURN_IF_ERROR(scheduler->SetTimesteps(request.num_inference_steps));
    return scheduler;
  }

  std::vector<int64_t> NoiseShape(
      const GenerationRequest& request) const override {
    const int64_t scale = vae_->config().scale_factor();
    return {1, Frames(request).padded, vae_->config().latent_channels,
            request.height / scale, request.width / scale};
  }
  at::Tensor PackLatents(const at::Tensor& noise) const override {
    return noise.to(options());
  }
  at::Tensor UnpackLatents(
      const at::Tensor& packed,
      const GenerationRequest& /*request*/) const override {
    return packed;
  }
  std::vector<int64_t> LatentsShape(
      const GenerationRequest& request) const override {
    std::vector<int64_t> shape = NoiseShape(request);
    shape[0] = request.batch();
    return shape;
  }

  absl::StatusOr<std::unique_ptr<BoundForward>> BindForward(
      const GenerationRequest& /*request*/, const at::Tensor& latents,
      const at::Tensor& timestep, const Conditioning& text) override {
    CogVideoXTransformerInputs inputs;
    inputs.hidden_states = latents;
    inputs.encoder_hidden_states = text.states.to(options());
    inputs.timestep =
        timestep.to(placement_.device, torch::kLong).expand({latents.size(0)});
    return std::make_unique<CogVideoXForward>(*transformer_, std::move(inputs));
  }

  absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>> RequestTables(
      const GenerationRequest& request) const override {
    const std::vector<int64_t> shape = NoiseShape(request);
    ASSIGN_OR_RETURN(
        VideoTokenGrid grid,
        TokenGridOf(transformer_->config(), shape[1], shape[3], shape[4]));
    ASSIGN_OR_RETURN(const VideoPositions positions,
                     transformer_->PositionsOn(grid, placement_.device));
    std::vector<std::pair<std::string, at::Tensor>> tables;
    if (const std::optional<models::RotaryTables>& rotary = positions.rotary;
        rotary.has_value()) {
      tables = {{"rotary_cos", rotary->cos}, {"rotary_sin", rotary->sin}};
    }
    return tables;
  }

  absl::StatusOr<DecodeOutput> Decode(const at::Tensor& latents,
                                      const DecodeRequest& output) override {
    const CogVideoXVaeConfig& config = vae_->config();
    const config::LatentFrames frames = LatentFramesOf(output.frames);
    RETURN_IF_ERROR(models::CheckShape(
        "latents", latents,
        {models::kAnySize, frames.padded, config.latent_channels,
         models::kAnySize, models::kAnySize}));
    torch::NoGradGuard no_grad;
    return base::Guarded("VAE decode", [&]() -> absl::StatusOr<DecodeOutput> {
      DecodeOutput out;
      // [B, F, C, h, w] without the padding frames in front -> the VAE's
      // [B, C, F, h, w].
      out.vae_input =
          latents.narrow(1, frames.padded - frames.unpadded, frames.unpadded)
              .permute({0, 2, 1, 3, 4}) /
          config.scaling_factor;
      ASSIGN_OR_RETURN(at::Tensor raw, output.vae_tiling
                                           ? vae_->DecodeTiled(out.vae_input)
                                           : vae_->Decode(out.vae_input));
      out.images = models::PostprocessDecodedVideo(raw);
      return out;
    });
  }

  ModelDimensions dimensions() const override {
    const CogVideoXTransformerConfig& config = transformer_->config();
    return ModelDimensions{
        .hidden_size = static_cast<int>(config.inner_dim()),
        .transformer_out_channels = static_cast<int>(config.out_channels),
        .token_output_channels =
            static_cast<int>(config.token_output_channels()),
        .stages_pass_text_stream = true};
  }
  torch::nn::Module& transformer() override { return *transformer_; }
  int64_t total_blocks() const override {
    return transformer_->config().num_layers;
  }

 private:
  config::LatentFrames LatentFramesOf(int64_t frames) const {
    return config::LatentFramesOf(
        static_cast<int>(frames),
        static_cast<int>(vae_->config().temporal_compression_ratio),
        static_cast<int>(transformer_->config().temporal_patch()));
  }
  config::LatentFrames Frames(const GenerationRequest& request) const {
    return LatentFramesOf(request.frames);
  }
  c10::TensorOptions options() const {
    return c10::TensorOptions()
        .device(placement_.device)
        .dtype(placement_.dtype);
  }

  std::unique_ptr<models::T5PromptEncoder> encoder_;
  std::shared_ptr<CogVideoXTransformer3DModel> transformer_;
  std::shared_ptr<AutoencoderKLCogVideoX> vae_;
  nlohmann::json scheduler_json_;
  std::string scheduler_path_;
  models::Placement placement_;
};

class CogVideoX final : public Family {
 public:
  std::vector<config::ModelDefaults> serves() const override {
    return {kCogVideoX2bDefaults, kCogVideoX5bDefaults, kCogVideoX15Defaults};
  }
  std::vector<std::string> pipeline_classes() const override {
    return {"CogVideoXPipeline"};
  }

  absl::StatusOr<config::ModelSpec> Detect(
      const config::CheckpointConfigs& configs) const override {
    ASSIGN_OR_RETURN(CogVideoXTransformerConfig transformer,
                     ParseCogVideoXTransformerConfig(configs.transformer,
                                                     configs.transformer_path));
    config::ModelSpec spec = configs.spec;
    // The three released models differ in their position encoding and
    // temporal patch: 2b a sincos table, 5b RoPE, 1.5 RoPE over pairs of
    // latent frames.
    spec.defaults = transformer.patch_size_t.has_value() ? kCogVideoX15Defaults
                    : transformer.use_rotary_positional_embeddings
                        ? kCogVideoX5bDefaults
                        : kCogVideoX2bDefaults;
    // Released folders name CogVideoXDDIMScheduler; a folder switched to
    // DPM (as CogVideo's own demo does) runs and reports that.
    if (configs.scheduler_class == "CogVideoXDPMScheduler") {
      spec.defaults.scheduler = v1::SCHEDULER_KIND_COGVIDEOX_DPM;
    }
    DetectStepCheck(configs, MakeCogVideoXScheduler, spec);
    // The 2b table holds zero rows for exactly the text the model was
    // trained with; a fine-tune may have changed it.
    if (spec.defaults.fixed_sequence_length) {
      spec.defaults.max_sequence_length =
          spec.defaults.max_sequence_length_limit =
              static_cast<int>(transformer.max_text_seq_length);
    }
    if (transformer.cuts_rope_grid()) {
      const int64_t patch_pixels =
          transformer.patch_size * spec.vae_scale_factor;
      spec.max_height =
          static_cast<int>(transformer.rope_grid_height() * patch_pixels);
      spec.max_width =
          static_cast<int>(transformer.rope_grid_width() * patch_pixels);
    }
    spec.temporal_compression =
        static_cast<int>(transformer.temporal_compression_ratio);
    spec.temporal_patch = static_cast<int>(transformer.temporal_patch());
    ASSIGN_OR_RETURN(CogVideoXVaeConfig vae,
                     ParseCogVideoXVaeConfig(configs.vae, configs.vae_path));
    SetVaeTiles(CogVideoXVaeTiles(vae), vae.scale_factor(), spec);
    return spec;
  }

  // Rank 0 decodes a video in passes of a few latent frames, so the decode's
  // activations grow with the frames of the largest pass, not of the video.
  // Its ResNet blocks' spatial norms add the latents' up-sampled
  // conditioning and two convolutions of it to an AutoencoderKL's, and its
  // causal convolutions pad their inputs with cached frames; its VAE has no
  // mid-block attention. Measured: 7 to 10 tensors of the random `small`
  // checkpoint's one width over five runs of the same request (the peak
  // varies with what the allocator keeps; request_memory_test.cc), so 11.
  int64_t RequestBytes(const v1::InputConfig& config,
                       const config::ModelSpec& spec) const override {
    constexpr FullResolutionActivations kDecoder{.upsampled = 2,
                                                 .last_level = 11};
    // The decoder sees the latent frames without 1.5's temporal padding.
    const int64_t frames = MostFramesPerDecoderPass(
        config::LatentFramesOf(config.num_frames(), spec.temporal_compression,
                               spec.temporal_patch)
            .unpadded,
        absl::countr_zero(static_cast<uint64_t>(spec.temporal_compression)));
    return ForwardAndDecodePeakBytes(
               config, TransformerForwardBytes(config, spec),
               VaeDecodeBytes(config, spec, frames, kDecoder)) +
           OutputBytes(config);
  }

  absl::StatusOr<models::BlockRange> StageBlocks(const std::string& model_dir,
                                                 int stage,
                                                 int stages) const override {
    ASSIGN_OR_RETURN(
        CogVideoXTransformerConfig config,
        ReadCogVideoXTransformerConfig(model_dir + "/transformer/config.json"));
    return models::SplitBlocksByWeight(
        std::vector<int64_t>(config.num_layers, 1), stage, stages);
  }

  absl::Status WriteRandomCheckpoint(
      const config::ModelDefaults& model, checkpoints::CheckpointPreset preset,
      uint64_t seed, const std::string& out_dir) const override {
    return checkpoints::WriteCogVideoXCheckpoint(model, preset, seed, out_dir);
  }

  absl::StatusOr<std::unique_ptr<FamilyModel>> Load(
      const std::string& model_dir, const LoadOptions& options) const override {
    std::unique_ptr<models::T5PromptEncoder> encoder;
    if (options.prompt_encoders) {
      ASSIGN_OR_RETURN(
          encoder, models::T5PromptEncoder::Load(model_dir, options.placement));
    }
    ASSIGN_OR_RETURN(std::shared_ptr<CogVideoXTransformer3DModel> transformer,
                     LoadCogVideoXTransformer3DModel(
                         model_dir + "/transformer", options.attention,
                         options.placement, options.blocks));
    ASSIGN_OR_RETURN(
        std::shared_ptr<AutoencoderKLCogVideoX> vae,
        LoadAutoencoderKLCogVideoX(model_dir + "/vae", options.placement));
    const std::string scheduler_path =
        model_dir + "/scheduler/scheduler_config.json";
    ASSIGN_OR_RETURN(nlohmann::json scheduler_json,
                     base::ReadJsonObjectFile(scheduler_path));
    // Fail at load, not at the first request, on a scheduler we cannot build.
    RETURN_IF_ERROR(
        MakeCogVideoXScheduler(scheduler_json, scheduler_path).status());
    RETURN_IF_ERROR(CheckComponentsFit(model_dir, transformer->config(),
                                       vae->config(), encoder.get()));
    return std::make_unique<CogVideoXModel>(
        std::move(encoder), std::move(transformer), std::move(vae),
        std::move(scheduler_json), scheduler_path, options.placement);
  }

 private:
  static absl::Status CheckComponentsFit(
      const std::string& model_dir,
      const CogVideoXTransformerConfig& transformer,
      const CogVideoXVaeConfig& vae, const models::T5PromptEncoder* encoder) {
    if (transformer.in_channels != vae.latent_channels ||
        transformer.out_channels != vae.latent_channels) {
      return absl::InvalidArgumentError(absl::StrCat(
          model_dir, ": transformer in_channels ", transformer.in_channels,
          " and out_channels ", transformer.out_channels,
          " must equal the VAE's latent_channels ", vae.latent_channels));
    }
    if (transformer.temporal_compression_ratio !=
        vae.temporal_compression_ratio) {
      return absl::InvalidArgumentError(absl::StrCat(
          model_dir, ": transformer temporal_compression_ratio ",
          transformer.temporal_compression_ratio, " differs from the VAE's ",
          vae.temporal_compression_ratio));
    }
    if (encoder != nullptr && encoder->width() != transformer.text_embed_dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          model_dir, ": the text encoder's d_model ", encoder->width(),
          " differs from the transformer's text_embed_dim ",
          transformer.text_embed_dim));
    }
    return absl::OkStatus();
  }
};

}  // namespace

const Family& CogVideoXFamily() {
  static const CogVideoX* const family = new CogVideoX();
  return *family;
}

}  // namespace ditserve::families
