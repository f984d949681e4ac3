#include "core/families/flux/flux_checkpoint.h"

#include <torch/torch.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/diffusers_checkpoint.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/flux/flux_transformer_2d_model.h"

namespace ditserve::checkpoints {
namespace {

models::FluxTransformerConfig TransformerConfig(CheckpointPreset preset,
                                                bool guidance_embeds) {
  models::FluxTransformerConfig config;
  config.patch_size = 1;
  // 16 latent channels x 2x2 packing, as in FLUX.1.
  config.in_channels = 64;
  config.out_channels = 64;
  config.guidance_embeds = guidance_embeds;
  if (preset == CheckpointPreset::kTiny) {
    config.num_layers = 2;
    config.num_single_layers = 2;
    config.num_attention_heads = 4;
    config.attention_head_dim = 16;
    config.axes_dims_rope = {4, 6, 6};
    config.joint_attention_dim = 32;
    config.pooled_projection_dim = 32;
  } else {
    config.num_layers = 2;
    config.num_single_layers = 4;
    config.num_attention_heads = 8;
    config.attention_head_dim = 32;
    // FLUX.1's 16/56/56 split of 128 channels, scaled to 32.
    config.axes_dims_rope = {4, 14, 14};
    config.joint_attention_dim = 128;
    config.pooled_projection_dim = 64;
  }
  return config;
}

}  // namespace

absl::StatusOr<FluxCheckpointConfigs> FluxPresetConfigs(
    const config::ModelDefaults& defaults, CheckpointPreset preset) {
  if (defaults.name != families::kFluxDevDefaults.name &&
      defaults.name != families::kFluxSchnellDefaults.name) {
    return absl::InvalidArgumentError(
        absl::StrCat("model ", defaults.name,
                     " is not a FLUX model; expected flux-dev or "
                     "flux-schnell"));
  }
  FluxCheckpointConfigs configs;
  configs.transformer =
      TransformerConfig(preset, defaults.uses_guidance_embedding);
  // FLUX.1's VAE latent statistics.
  configs.vae = VaeConfig(preset, {.channels = 16,
                                   .scaling_factor = 0.3611,
                                   .shift_factor = 0.1159,
                                   .quant_convs = false});
  configs.scheduler.shift = defaults.scheduler_shift;
  configs.scheduler.use_dynamic_shifting = defaults.scheduler_dynamic_shift;
  return configs;
}

absl::Status WriteFluxCheckpoint(const config::ModelDefaults& model,
                                 CheckpointPreset preset, uint64_t seed,
                                 const std::string& out_dir) {
  ASSIGN_OR_RETURN(FluxCheckpointConfigs configs,
                   FluxPresetConfigs(model, preset));
  const models::FluxTransformerConfig& transformer = configs.transformer;
  return WriteDiffusersCheckpoint(
      {.pipeline_class = "FluxPipeline",
       .transformer_config = models::ToJson(transformer),
       .transformer_weights =
           [&transformer]() -> absl::StatusOr<io::TensorMap> {
         ASSIGN_OR_RETURN(
             std::shared_ptr<models::FluxTransformer2DModel> model,
             models::FluxTransformer2DModel::Create(
                 transformer, /*attention=*/nullptr,
                 models::BlockRange{0, transformer.total_blocks()}));
         return PerturbedWeights(*model);
       },
       .vae = AutoencoderKLComponent(configs.vae),
       .scheduler = FlowMatchSchedulerJson(configs.scheduler),
       .components = {{"scheduler",
                       {"diffusers", "FlowMatchEulerDiscreteScheduler"}},
                      {"transformer", {"diffusers", "FluxTransformer2DModel"}},
                      {"vae", {"diffusers", "AutoencoderKL"}}},
       // CLIP-L's pooled output is the pooled projection's input; T5's states
       // are the joint attention's text input.
       .text_encoders =
           {{.kind = TextEncoderSlot::Kind::kClip,
             .width = static_cast<int>(transformer.pooled_projection_dim),
             .tokenizer = "tokenizer",
             .text_encoder = "text_encoder"},
            {.kind = TextEncoderSlot::Kind::kT5,
             .width = static_cast<int>(transformer.joint_attention_dim),
             .tokenizer = "tokenizer_2",
             .text_encoder = "text_encoder_2"}}},
      preset, seed, out_dir);
}

}  // namespace ditserve::checkpoints
