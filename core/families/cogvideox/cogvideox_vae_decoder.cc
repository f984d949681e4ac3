#include "core/families/cogvideox/cogvideox_vae_decoder.h"

#include <torch/torch.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/families/cogvideox/causal_conv3d.h"
#include "core/families/cogvideox/cogvideox_vae_frame_batches.h"
#include "core/models/tensor_checks.h"

namespace ditserve::families {

AutoencoderKLCogVideoX::AutoencoderKLCogVideoX(const CogVideoXVaeConfig& config)
    : config_(config),
      decoder_(register_module("decoder", CogVideoXDecoder3D(config))) {}

bool AutoencoderKLCogVideoX::HoldsTensor(absl::string_view name) const {
  return absl::StartsWith(name, "decoder.");
}

absl::Status AutoencoderKLCogVideoX::CheckLatents(const at::Tensor& z) const {
  RETURN_IF_ERROR(models::CheckShape(
      "z", z,
      {models::kAnySize, config_.latent_channels, models::kAnySize,
       models::kAnySize, models::kAnySize}));
  if (z.numel() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("z has shape ", models::ShapeString(z.sizes().vec()),
                     "; no size may be 0"));
  }
  return absl::OkStatus();
}

absl::StatusOr<at::Tensor> AutoencoderKLCogVideoX::Decode(const at::Tensor& z) {
  RETURN_IF_ERROR(CheckLatents(z));
  return base::Guarded("AutoencoderKLCogVideoX decode failed",
                       [&] { return DecodeUnchecked(z); });
}

absl::StatusOr<at::Tensor> AutoencoderKLCogVideoX::DecodeTiled(
    const at::Tensor& z) {
  ASSIGN_OR_RETURN(models::DecodeTiles tiles, CogVideoXVaeTiles(config_));
  return DecodeTiled(z, tiles);
}

absl::StatusOr<at::Tensor> AutoencoderKLCogVideoX::DecodeTiled(
    const at::Tensor& z, const models::DecodeTiles& tiles) {
  RETURN_IF_ERROR(CheckLatents(z));
  return base::Guarded("AutoencoderKLCogVideoX tiled decode failed", [&] {
    if (!models::NeedsTiles(tiles, z)) return DecodeUnchecked(z);
    return models::DecodeInTiles(z, tiles, [this](const at::Tensor& tile) {
      return DecodeUnchecked(tile);
    });
  });
}

at::Tensor AutoencoderKLCogVideoX::DecodeUnchecked(const at::Tensor& z) {
  torch::NoGradGuard no_grad;
  const std::vector<FrameRange> batches = DecodeFrameBatches(z.size(2));
  const int64_t doublings = config_.temporal_upsampling_blocks();
  int64_t frames = 0;
  for (const FrameRange& batch : batches) {
    frames += DecodedFrames(batch.end - batch.begin, doublings);
  }
  const int64_t scale = config_.scale_factor();
  // Filled chunk by chunk, so the chunks' outputs never exist twice.
  at::Tensor video = at::empty({z.size(0), config_.out_channels, frames,
                                z.size(3) * scale, z.size(4) * scale},
                               z.options());
  CausalConvCache cache;
  int64_t written = 0;
  for (const FrameRange& batch : batches) {
    const at::Tensor chunk =
        decoder_->Forward(z.slice(2, batch.begin, batch.end), cache);
    video.slice(2, written, written + chunk.size(2)).copy_(chunk);
    written += chunk.size(2);
  }
  return video;
}

absl::StatusOr<at::Tensor> AutoencoderKLCogVideoX::DecodeSinglePass(
    const at::Tensor& z) {
  RETURN_IF_ERROR(CheckLatents(z));
  return base::Guarded("AutoencoderKLCogVideoX decode failed", [&] {
    torch::NoGradGuard no_grad;
    CausalConvCache cache;
    return decoder_->Forward(z, cache);
  });
}

absl::StatusOr<models::DecodeTiles> CogVideoXVaeTiles(
    const CogVideoXVaeConfig& config) {
  return CogVideoXVaeTilesOfSize(config, config.sample_height / 2,
                                 config.sample_width / 2);
}

absl::StatusOr<models::DecodeTiles> CogVideoXVaeTilesOfSize(
    const CogVideoXVaeConfig& config, int64_t tile_height, int64_t tile_width) {
  return models::TilesForSample(tile_height, tile_width, 1.0 / 6, 1.0 / 5,
                                config.scale_factor());
}

absl::StatusOr<std::shared_ptr<AutoencoderKLCogVideoX>>
LoadAutoencoderKLCogVideoX(const std::string& component_dir,
                           const models::Placement& placement) {
  ASSIGN_OR_RETURN(CogVideoXVaeConfig config,
                   ReadCogVideoXVaeConfig(component_dir + "/config.json"));
  return models::BuildAndLoad<AutoencoderKLCogVideoX>(
      "AutoencoderKLCogVideoX", component_dir, placement, config);
}

}  // namespace ditserve::families
