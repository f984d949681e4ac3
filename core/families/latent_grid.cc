#include "core/families/latent_grid.h"

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/families/request_memory.h"
#include "core/models/tensor_checks.h"

namespace ditserve::families {

std::vector<int64_t> LatentNoiseShape(const GenerationRequest& request,
                                      const models::AutoencoderKL& vae) {
  const int64_t scale = vae.config().scale_factor();
  return {1, vae.config().latent_channels, request.height / scale,
          request.width / scale};
}

absl::Status CheckLatentGridSize(const GenerationRequest& request,
                                 const models::AutoencoderKL& vae,
                                 int64_t patch_size) {
  const int64_t scale = vae.config().scale_factor();
  const int64_t multiple = scale * patch_size;
  if (request.height <= 0 || request.width <= 0 ||
      request.height % multiple != 0 || request.width % multiple != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("image size ", request.height, "x", request.width,
                     " must be positive multiples of ", multiple,
                     " (VAE scale ", scale, " x patch ", patch_size, ")"));
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckOneConditioning(absl::string_view prefix,
                                  const Conditioning& conditioning,
                                  int64_t batch, int64_t text_tokens,
                                  const ConditioningWidths& widths) {
  RETURN_IF_ERROR(models::CheckShape(absl::StrCat(prefix, "prompt_embeds"),
                                     conditioning.states,
                                     {batch, text_tokens, widths.states}));
  absl::Status status;
  if (widths.pooled > 0) {
    status.Update(
        models::CheckShape(absl::StrCat(prefix, "pooled_prompt_embeds"),
                           conditioning.pooled, {batch, widths.pooled}));
  }
  if (widths.mask) {
    status.Update(models::CheckShape(
        absl::StrCat(prefix, "prompt_attention_mask"), conditioning.mask,
        {batch, conditioning.states.size(1)}));
  }
  return status;
}

}  // namespace

absl::Status CheckConditioning(const GenerationRequest& request,
                               GuidanceRule rule,
                               const ConditioningWidths& widths) {
  RETURN_IF_ERROR(CheckOneConditioning("", request.prompt, request.batch(),
                                       models::kAnySize, widths));
  if (rule != GuidanceRule::kClassifierFree || request.guidance_scale <= 1.0F) {
    return absl::OkStatus();
  }
  return CheckOneConditioning("negative_", request.negative_prompt,
                              request.batch(), request.prompt.states.size(1),
                              widths);
}

absl::StatusOr<VaeAndScheduler> LoadVaeAndScheduler(
    const std::string& model_dir, const models::Placement& placement) {
  VaeAndScheduler loaded;
  ASSIGN_OR_RETURN(loaded.vae,
                   models::LoadAutoencoderKL(model_dir + "/vae", placement));
  loaded.scheduler_path = model_dir + "/scheduler/scheduler_config.json";
  ASSIGN_OR_RETURN(loaded.scheduler_json,
                   base::ReadJsonObjectFile(loaded.scheduler_path));
  return loaded;
}

absl::StatusOr<DecodeOutput> DecodeLatents(models::AutoencoderKL& vae,
                                           const at::Tensor& latents,
                                           bool vae_tiling) {
  const models::AutoencoderKLConfig& config = vae.config();
  RETURN_IF_ERROR(models::CheckShape("latents", latents,
                                     {models::kAnySize, config.latent_channels,
                                      models::kAnySize, models::kAnySize}));
  torch::NoGradGuard no_grad;
  return base::Guarded("VAE decode", [&]() -> absl::StatusOr<DecodeOutput> {
    DecodeOutput out;
    out.vae_input =
        latents / config.scaling_factor + config.shift_factor.value_or(0.0);
    ASSIGN_OR_RETURN(at::Tensor raw, vae_tiling ? vae.DecodeTiled(out.vae_input)
                                                : vae.Decode(out.vae_input));
    out.images = models::PostprocessDecoded(raw);
    return out;
  });
}

absl::Status DetectAutoencoderKLTiles(const config::CheckpointConfigs& configs,
                                      config::ModelSpec& spec) {
  ASSIGN_OR_RETURN(
      models::AutoencoderKLConfig vae,
      models::ParseAutoencoderKLConfig(configs.vae, configs.vae_path));
  SetVaeTiles(models::AutoencoderKLTiles(vae), vae.scale_factor(), spec);
  return absl::OkStatus();
}

int64_t LatentGridRequestBytes(const v1::InputConfig& config,
                               const config::ModelSpec& spec) {
  // Up-sampled input and its convolution; a ResNet block's input, norm,
  // convolution and residual sum. Measured: 5.1 tensors of the (equal)
  // widths of the random `tiny` checkpoint at 2048², 1.65 and 3.45 of the
  // `small` one's 64 and 32 at 1536², but 1.3 times as many bytes per pixel
  // at 2048² (request_memory_test.cc), which one more of each covers.
  constexpr FullResolutionActivations kAutoencoderKL{.upsampled = 3,
                                                     .last_level = 5};
  const int64_t forward = TransformerForwardBytes(config, spec);
  const int64_t decode =
      VaeAttentionBytes(config, spec) +
      VaeDecodeBytes(config, spec, /*frames=*/1, kAutoencoderKL);
  return ForwardAndDecodePeakBytes(config, forward, decode) +
         OutputBytes(config);
}

}  // namespace ditserve::families
