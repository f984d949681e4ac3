#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_DECODER_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_DECODER_H_

// The decoding half of diffusers (v0.38.0) AutoencoderKLCogVideoX, CogVideoX's
// causal 3-D video VAE. Decode follows AutoencoderKLCogVideoX.decode: the
// latent frames are decoded in chunks of two (three for the first chunk of an
// odd count), each chunk's pass continuing the causal convs from the caches
// of the previous one, so only one chunk's activations and the small caches
// are alive at a time. GroupNorm statistics are per chunk, as in diffusers.
// DecodeTiled follows it after enable_tiling(): each spatial tile is decoded
// as above over all frames. Not implemented: batch slicing, the encoder (its
// checkpoint tensors are skipped), and CogVideoXSafeConv3d's splitting of
// inputs over 2^30 elements along time, which only bounds cuDNN workspace and
// gives the same values.

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/families/cogvideox/cogvideox_decoder_3d.h"
#include "core/families/cogvideox/cogvideox_vae_config.h"
#include "core/models/component_weights.h"
#include "core/models/vae/tiled_decode.h"

namespace ditserve::families {

class AutoencoderKLCogVideoX : public torch::nn::Module {
 public:
  explicit AutoencoderKLCogVideoX(const CogVideoXVaeConfig& config);

  const CogVideoXVaeConfig& config() const { return config_; }

  // Whether a checkpoint tensor is part of the decoding half
  // (io::LoadOptions::include).
  bool HoldsTensor(absl::string_view name) const;

  // AutoencoderKLCogVideoX.decode(z).sample: z [B, latent_channels, F, h, w]
  // (channels before frames, already multiplied by 1/scaling_factor) ->
  // video [B, out_channels, frames, h * 8, w * 8] (for four up blocks),
  // roughly [-1, 1], with frames = 4(F - 1) + 1 for an odd F and 4F for an
  // even one (temporal_compression_ratio 4).
  absl::StatusOr<at::Tensor> Decode(const at::Tensor& z);

  // The same after diffusers' enable_tiling(): z larger than one of the
  // VAE's tiles (CogVideoXVaeTiles) is decoded in blended tiles;
  // INVALID_ARGUMENT when its config gives no tiles.
  absl::StatusOr<at::Tensor> DecodeTiled(const at::Tensor& z);
  // With other tiles (enable_tiling's arguments).
  absl::StatusOr<at::Tensor> DecodeTiled(const at::Tensor& z,
                                         const models::DecodeTiles& tiles);

  // model.decoder(z): one decoder pass over all frames, without the frame
  // chunks. Not what the pipeline does (its norms see every frame, so it
  // differs from Decode); it checks the decoder apart from the chunking.
  absl::StatusOr<at::Tensor> DecodeSinglePass(const at::Tensor& z);

 private:
  absl::Status CheckLatents(const at::Tensor& z) const;
  at::Tensor DecodeUnchecked(const at::Tensor& z);

  CogVideoXVaeConfig config_;
  CogVideoXDecoder3D decoder_;
};

// diffusers' tiles for this VAE: half its sample_height × sample_width,
// overlapping by a sixth of their height and a fifth of their width.
absl::StatusOr<models::DecodeTiles> CogVideoXVaeTiles(
    const CogVideoXVaeConfig& config);
// The same for tiles of tile_height × tile_width pixels (enable_tiling's
// tile_sample_min_height and tile_sample_min_width).
absl::StatusOr<models::DecodeTiles> CogVideoXVaeTilesOfSize(
    const CogVideoXVaeConfig& config, int64_t tile_height, int64_t tile_width);

// Builds the decoder from a diffusers `vae/` folder (config.json +
// diffusion_pytorch_model.safetensors) and loads its weights strictly.
absl::StatusOr<std::shared_ptr<AutoencoderKLCogVideoX>>
LoadAutoencoderKLCogVideoX(const std::string& component_dir,
                           const models::Placement& placement);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_DECODER_H_
