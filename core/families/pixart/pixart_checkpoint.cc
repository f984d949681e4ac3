#include "core/families/pixart/pixart_checkpoint.h"

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/diffusers_checkpoint.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/pixart/pixart_transformer_2d_model.h"

namespace ditserve::checkpoints {
namespace {

// diffusers' PixArtTransformer2DModel config. α's micro-conditions split the
// inner dim in three and the sincos table in four, so it is a multiple of 12.
nlohmann::json TransformerJson(CheckpointPreset preset, bool alpha) {
  const bool tiny = preset == CheckpointPreset::kTiny;
  const int heads = tiny ? 4 : 8;
  const int head_dim = tiny ? 12 : 24;
  return {
      {"_class_name", "PixArtTransformer2DModel"},
      {"activation_fn", "gelu-approximate"},
      {"attention_bias", true},
      {"attention_head_dim", head_dim},
      {"attention_type", "default"},
      {"caption_channels", tiny ? 32 : 128},
      {"cross_attention_dim", heads * head_dim},
      {"dropout", 0.0},
      {"in_channels", 4},
      {"interpolation_scale", 1},
      {"norm_elementwise_affine", false},
      {"norm_eps", 1e-6},
      {"norm_num_groups", 32},
      {"norm_type", "ada_norm_single"},
      {"num_attention_heads", heads},
      {"num_embeds_ada_norm", 1000},
      {"num_layers", tiny ? 2 : 4},
      // Learned sigma, as both released models.
      {"out_channels", 8},
      {"patch_size", 2},
      {"sample_size", 32},
      {"upcast_attention", false},
      {"use_additional_conditions", alpha},
  };
}

// The released checkpoints' DPMSolverMultistepScheduler.
nlohmann::json SchedulerJson() {
  return {
      {"_class_name", "DPMSolverMultistepScheduler"},
      {"algorithm_type", "dpmsolver++"},
      {"beta_end", 0.02},
      {"beta_schedule", "linear"},
      {"beta_start", 0.0001},
      {"dynamic_thresholding_ratio", 0.995},
      {"euler_at_final", false},
      {"final_sigmas_type", "zero"},
      {"lower_order_final", true},
      {"num_train_timesteps", 1000},
      {"prediction_type", "epsilon"},
      {"sample_max_value", 1.0},
      {"solver_order", 2},
      {"solver_type", "midpoint"},
      {"steps_offset", 0},
      {"thresholding", false},
      {"timestep_spacing", "linspace"},
      {"trained_betas", nullptr},
      {"use_karras_sigmas", false},
      {"use_lu_lambdas", false},
      {"variance_type", nullptr},
  };
}

}  // namespace

absl::Status WritePixArtCheckpoint(const config::ModelDefaults& model,
                                   CheckpointPreset preset, uint64_t seed,
                                   const std::string& out_dir) {
  const bool alpha = model.name == families::kPixArtAlphaDefaults.name;
  if (!alpha && model.name != families::kPixArtSigmaDefaults.name) {
    return absl::InvalidArgumentError(
        absl::StrCat("model ", model.name,
                     " is not a PixArt model; expected pixart-alpha or "
                     "pixart-sigma"));
  }
  const nlohmann::json transformer_json = TransformerJson(preset, alpha);
  ASSIGN_OR_RETURN(models::PixArtTransformerConfig transformer,
                   models::ParsePixArtTransformerConfig(
                       transformer_json, "transformer/config.json"));
  return WriteDiffusersCheckpoint(
      {.pipeline_class = alpha ? "PixArtAlphaPipeline" : "PixArtSigmaPipeline",
       .transformer_config = transformer_json,
       .transformer_weights =
           [&transformer]() -> absl::StatusOr<io::TensorMap> {
         models::PixArtTransformer2DModel model(transformer,
                                                /*attention=*/nullptr);
         return PerturbedWeights(model);
       },
       // The SD VAE's latent statistics.
       .vae = AutoencoderKLComponent(VaeConfig(
           preset,
           {.channels = 4, .scaling_factor = 0.18215, .quant_convs = true})),
       .scheduler = SchedulerJson(),
       .components = {{"scheduler",
                       {"diffusers", "DPMSolverMultistepScheduler"}},
                      {"transformer",
                       {"diffusers", "PixArtTransformer2DModel"}},
                      {"vae", {"diffusers", "AutoencoderKL"}}},
       .text_encoders = {{.kind = TextEncoderSlot::Kind::kT5,
                          .width =
                              static_cast<int>(transformer.caption_channels),
                          .tokenizer = "tokenizer",
                          .text_encoder = "text_encoder"}}},
      preset, seed, out_dir);
}

}  // namespace ditserve::checkpoints
