#ifndef DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_H_
#define DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/models/component_weights.h"
#include "core/models/layers/conv.h"
#include "core/models/vae/autoencoder_kl_config.h"
#include "core/models/vae/decoder_blocks.h"
#include "core/models/vae/tiled_decode.h"

namespace ditserve::models {

// The decoding half of diffusers AutoencoderKL: post_quant_conv (when the
// config has it) and `decoder`. The encoder is not built; its checkpoint
// tensors are skipped when loading.
class AutoencoderKL : public torch::nn::Module {
 public:
  explicit AutoencoderKL(const AutoencoderKLConfig& config);

  const AutoencoderKLConfig& config() const { return config_; }

  // Whether a checkpoint tensor is part of the decoding half
  // (io::LoadOptions::include).
  bool HoldsTensor(absl::string_view name) const;

  // AutoencoderKL.decode(z).sample: z [B, latent_channels, h, w] as the
  // pipeline hands it over (already unscaled and unshifted) -> image
  // [B, out_channels, h * scale_factor, w * scale_factor], roughly [-1, 1].
  absl::StatusOr<at::Tensor> Decode(const at::Tensor& z);

  // The same after diffusers' enable_tiling(): z larger than one of the
  // VAE's tiles (AutoencoderKLTiles) is decoded in blended tiles;
  // INVALID_ARGUMENT when its config gives no tiles.
  absl::StatusOr<at::Tensor> DecodeTiled(const at::Tensor& z);
  // With other tiles (enable_tiling's arguments).
  absl::StatusOr<at::Tensor> DecodeTiled(const at::Tensor& z,
                                         const DecodeTiles& tiles);

 private:
  at::Tensor DecodeUnchecked(const at::Tensor& z);

  AutoencoderKLConfig config_;
  Conv2d post_quant_conv_{nullptr};
  Conv2d conv_in_{nullptr};
  UNetMidBlock2D mid_block_{nullptr};
  std::vector<UpDecoderBlock2D> up_blocks_;
  torch::nn::GroupNorm conv_norm_out_{nullptr};
  Conv2d conv_out_{nullptr};
};

// diffusers' tiles for this VAE: sample_size² pixels overlapping by a
// quarter.
absl::StatusOr<DecodeTiles> AutoencoderKLTiles(
    const AutoencoderKLConfig& config);

// Builds the decoder from a diffusers `vae/` folder (config.json + weights)
// and loads its weights strictly.
absl::StatusOr<std::shared_ptr<AutoencoderKL>> LoadAutoencoderKL(
    const std::string& component_dir, const Placement& placement);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_H_
