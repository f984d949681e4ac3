#include "core/families/sd3/sd3_checkpoint.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/diffusers_checkpoint.h"
#include "core/families/sd3/sd3_defaults.h"
#include "core/families/sd3/sd3_transformer_2d_model.h"
#include "core/models/layers/sincos_position_table.h"

namespace ditserve::checkpoints {
namespace {

// The text encoders' widths: CLIP-L's and CLIP-G's hidden sizes (their
// penultimate states share the joint attention input, their pooled
// projections make the pooled input) and T5's d_model.
struct TextWidths {
  int clip_l;
  int clip_g;
  int t5;
};

TextWidths TextWidthsOf(CheckpointPreset preset) {
  return preset == CheckpointPreset::kTiny ? TextWidths{16, 32, 64}
                                           : TextWidths{32, 64, 128};
}

nlohmann::json TransformerJson(CheckpointPreset preset) {
  const bool tiny = preset == CheckpointPreset::kTiny;
  const TextWidths widths = TextWidthsOf(preset);
  const int heads = tiny ? 4 : 8;
  const int head_dim = tiny ? 16 : 32;
  return {
      {"_class_name", "SD3Transformer2DModel"},
      {"attention_head_dim", head_dim},
      {"caption_projection_dim", heads * head_dim},
      {"dual_attention_layers", nlohmann::json::array()},
      {"in_channels", 16},
      {"joint_attention_dim", widths.t5},
      {"num_attention_heads", heads},
      {"num_layers", tiny ? 2 : 4},
      {"out_channels", 16},
      {"patch_size", 2},
      {"pooled_projection_dim", widths.clip_l + widths.clip_g},
      // Patch grids up to 64 (tiny) or 96 (small) a side: 1024 or 1536 px.
      {"pos_embed_max_size", tiny ? 64 : 96},
      {"qk_norm", nullptr},
      {"sample_size", 32},
  };
}

// diffusers' PatchEmbed table: the sincos grid of pos_embed_max_size a side
// scaled to the trained grid (sample_size / patch_size).
at::Tensor PositionTable(const models::SD3TransformerConfig& config) {
  return models::SincosPositionTable2d(
             config.inner_dim(), config.pos_embed_max_size,
             config.pos_embed_max_size,
             static_cast<double>(config.sample_size / config.patch_size),
             /*interpolation_scale=*/1.0)
      .unsqueeze(0);
}

}  // namespace

absl::Status WriteSD3Checkpoint(CheckpointPreset preset, uint64_t seed,
                                const std::string& out_dir) {
  const nlohmann::json transformer_json = TransformerJson(preset);
  ASSIGN_OR_RETURN(models::SD3TransformerConfig transformer,
                   models::ParseSD3TransformerConfig(
                       transformer_json, "transformer/config.json"));
  const config::ModelDefaults& defaults = families::kSD3MediumDefaults;
  schedulers::FlowMatchEulerConfig scheduler;
  scheduler.shift = defaults.scheduler_shift;
  scheduler.use_dynamic_shifting = defaults.scheduler_dynamic_shift;
  const nlohmann::json absent = {nullptr, nullptr};
  const TextWidths widths = TextWidthsOf(preset);
  return WriteDiffusersCheckpoint(
      {.pipeline_class = "StableDiffusion3Pipeline",
       .transformer_config = transformer_json,
       .transformer_weights =
           [&transformer]() -> absl::StatusOr<io::TensorMap> {
         models::SD3Transformer2DModel model(transformer,
                                             /*attention=*/nullptr);
         io::TensorMap weights = PerturbedWeights(model);
         weights["pos_embed.pos_embed"] = PositionTable(transformer);
         return weights;
       },
       // SD3's VAE latent statistics.
       .vae = AutoencoderKLComponent(VaeConfig(
           preset,
           {.channels = 16, .scaling_factor = 1.5305, .shift_factor = 0.0609})),
       .scheduler = FlowMatchSchedulerJson(scheduler),
       .components = {{"scheduler",
                       {"diffusers", "FlowMatchEulerDiscreteScheduler"}},
                      {"transformer", {"diffusers", "SD3Transformer2DModel"}},
                      {"vae", {"diffusers", "AutoencoderKL"}},
                      {"feature_extractor", absent},
                      {"image_encoder", absent}},
       .text_encoders = {{.kind = TextEncoderSlot::Kind::kClipWithProjection,
                          .width = widths.clip_l,
                          .tokenizer = "tokenizer",
                          .text_encoder = "text_encoder"},
                         {.kind = TextEncoderSlot::Kind::kClipWithProjection,
                          .width = widths.clip_g,
                          .tokenizer = "tokenizer_2",
                          .text_encoder = "text_encoder_2",
                          .clip_pad_token = "!"},
                         {.kind = TextEncoderSlot::Kind::kT5,
                          .width = widths.t5,
                          .tokenizer = "tokenizer_3",
                          .text_encoder = "text_encoder_3"}}},
      preset, seed, out_dir);
}

}  // namespace ditserve::checkpoints
