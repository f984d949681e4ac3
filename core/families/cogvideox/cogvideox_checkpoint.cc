#include "core/families/cogvideox/cogvideox_checkpoint.h"

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/diffusers_checkpoint.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/families/cogvideox/cogvideox_transformer_3d_model.h"
#include "core/families/cogvideox/cogvideox_vae_decoder.h"

namespace ditserve::checkpoints {
namespace {

enum class Release { k2b, k5b, k15 };

// diffusers' CogVideoXTransformer3DModel config of the release, at the
// preset's widths: the trained latent sizes (RoPE's base grid) and T5
// length are the released ones.
nlohmann::json TransformerJson(CheckpointPreset preset, Release release) {
  const bool tiny = preset == CheckpointPreset::kTiny;
  const bool v15 = release == Release::k15;
  return {
      {"_class_name", "CogVideoXTransformer3DModel"},
      {"activation_fn", "gelu-approximate"},
      {"attention_bias", true},
      // RoPE splits a head in t (1/4), h and w (3/8 each) pairs.
      {"attention_head_dim", tiny ? 16 : 32},
      {"dropout", 0.0},
      {"flip_sin_to_cos", true},
      {"freq_shift", 0},
      {"in_channels", 16},
      {"max_text_seq_length", 226},
      {"norm_elementwise_affine", true},
      {"norm_eps", 1e-5},
      {"num_attention_heads", tiny ? 4 : 8},
      {"num_layers", tiny ? 4 : 6},
      {"ofs_embed_dim", nullptr},
      {"out_channels", 16},
      {"patch_bias", !v15},
      {"patch_size", 2},
      {"patch_size_t", v15 ? nlohmann::json(2) : nlohmann::json(nullptr)},
      {"sample_frames", v15 ? 81 : 49},
      {"sample_height", v15 ? 300 : 60},
      {"sample_width", v15 ? 300 : 90},
      {"spatial_interpolation_scale", 1.875},
      {"temporal_compression_ratio", 4},
      {"temporal_interpolation_scale", 1.0},
      {"text_embed_dim", tiny ? 32 : 128},
      {"time_embed_dim", tiny ? 32 : 128},
      {"timestep_activation_fn", "silu"},
      {"use_learned_positional_embeddings", false},
      {"use_rotary_positional_embeddings", release != Release::k2b},
  };
}

// AutoencoderKLCogVideoX: four levels (spatial ×8, temporal ×4) at the
// preset's widths, the release's latent scaling.
nlohmann::json VaeJson(CheckpointPreset preset, Release release) {
  const bool tiny = preset == CheckpointPreset::kTiny;
  const std::vector<int> widths =
      tiny ? std::vector<int>{8, 8, 16, 16} : std::vector<int>{32, 32, 64, 64};
  return {
      {"_class_name", "AutoencoderKLCogVideoX"},
      {"act_fn", "silu"},
      {"block_out_channels", widths},
      {"down_block_types", std::vector<std::string>(4, "CogVideoXDownBlock3D")},
      {"force_upcast", true},
      {"in_channels", 3},
      {"invert_scale_latents", release == Release::k15},
      {"latent_channels", 16},
      {"latents_mean", nullptr},
      {"latents_std", nullptr},
      {"layers_per_block", 1},
      {"norm_eps", 1e-6},
      {"norm_num_groups", tiny ? 4 : 8},
      {"out_channels", 3},
      {"sample_height", 480},
      {"sample_width", 720},
      {"scaling_factor", release == Release::k2b ? 1.15258426 : 0.7},
      {"shift_factor", nullptr},
      {"temporal_compression_ratio", 4},
      {"up_block_types", std::vector<std::string>(4, "CogVideoXUpBlock3D")},
      {"use_post_quant_conv", false},
      {"use_quant_conv", false},
  };
}

// The released folders' CogVideoXDDIMScheduler (2b shifts the SNR by 3).
nlohmann::json SchedulerJson(Release release) {
  return {
      {"_class_name", "CogVideoXDDIMScheduler"},
      {"beta_end", 0.012},
      {"beta_schedule", "scaled_linear"},
      {"beta_start", 0.00085},
      {"clip_sample", false},
      {"clip_sample_range", 1.0},
      {"num_train_timesteps", 1000},
      {"prediction_type", "v_prediction"},
      {"rescale_betas_zero_snr", true},
      {"sample_max_value", 1.0},
      {"set_alpha_to_one", true},
      {"snr_shift_scale", release == Release::k2b ? 3.0 : 1.0},
      {"steps_offset", 0},
      {"timestep_spacing", "trailing"},
      {"trained_betas", nullptr},
  };
}

absl::StatusOr<Release> ReleaseOf(const config::ModelDefaults& model) {
  if (model.name == families::kCogVideoX2bDefaults.name) return Release::k2b;
  if (model.name == families::kCogVideoX5bDefaults.name) return Release::k5b;
  if (model.name == families::kCogVideoX15Defaults.name) return Release::k15;
  return absl::InvalidArgumentError(absl::StrCat(
      "model ", model.name,
      " is not a CogVideoX model; expected cogvideox-2b, cogvideox-5b or "
      "cogvideox1.5-5b"));
}

}  // namespace

absl::Status WriteCogVideoXCheckpoint(const config::ModelDefaults& model,
                                      CheckpointPreset preset, uint64_t seed,
                                      const std::string& out_dir) {
  ASSIGN_OR_RETURN(Release release, ReleaseOf(model));
  const nlohmann::json transformer_json = TransformerJson(preset, release);
  ASSIGN_OR_RETURN(families::CogVideoXTransformerConfig transformer,
                   families::ParseCogVideoXTransformerConfig(
                       transformer_json, "transformer/config.json"));
  const nlohmann::json vae_json = VaeJson(preset, release);
  ASSIGN_OR_RETURN(
      families::CogVideoXVaeConfig vae,
      families::ParseCogVideoXVaeConfig(vae_json, "vae/config.json"));
  return WriteDiffusersCheckpoint(
      {.pipeline_class = "CogVideoXPipeline",
       .transformer_config = transformer_json,
       .transformer_weights =
           [&transformer]() -> absl::StatusOr<io::TensorMap> {
         families::CogVideoXTransformer3DModel module(transformer,
                                                      /*attention=*/nullptr);
         return PerturbedWeights(module);
       },
       .vae = {.config = vae_json,
               .weights = [&vae]() -> absl::StatusOr<io::TensorMap> {
                 families::AutoencoderKLCogVideoX module(vae);
                 return PerturbedWeights(module);
               }},
       .scheduler = SchedulerJson(release),
       .components = {{"scheduler", {"diffusers", "CogVideoXDDIMScheduler"}},
                      {"transformer",
                       {"diffusers", "CogVideoXTransformer3DModel"}},
                      {"vae", {"diffusers", "AutoencoderKLCogVideoX"}}},
       .text_encoders = {{.kind = TextEncoderSlot::Kind::kT5,
                          .width = static_cast<int>(transformer.text_embed_dim),
                          .tokenizer = "tokenizer",
                          .text_encoder = "text_encoder"}}},
      preset, seed, out_dir);
}

}  // namespace ditserve::checkpoints
