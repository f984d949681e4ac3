#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DECODER_3D_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DECODER_3D_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <vector>

#include "core/families/cogvideox/causal_conv3d.h"
#include "core/families/cogvideox/cogvideox_vae_blocks.h"
#include "core/families/cogvideox/cogvideox_vae_config.h"

namespace ditserve::families {

// diffusers CogVideoXDecoder3D: conv_in, mid_block, up_blocks (the first
// log2(temporal_compression_ratio) also double the frames, the last one does
// not up-sample), norm_out, SiLU, conv_out. Every norm is conditioned on the
// latent chunk itself.
class CogVideoXDecoder3DImpl : public torch::nn::Module {
 public:
  explicit CogVideoXDecoder3DImpl(const CogVideoXVaeConfig& config);

  // One pass over a chunk of latent frames z [B, latent_channels, t, h, w]
  // -> [B, out_channels, frames, H, W], continuing from the caches the
  // previous pass left in `cache` (a fresh cache: the start of the video).
  at::Tensor Forward(const at::Tensor& z, CausalConvCache& cache);

 private:
  CausalConv3d conv_in_{nullptr};
  UpBlock3D mid_block_{nullptr};
  std::vector<UpBlock3D> up_blocks_;
  SpatialNorm3D norm_out_{nullptr};
  CausalConv3d conv_out_{nullptr};
};
TORCH_MODULE(CogVideoXDecoder3D);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DECODER_3D_H_
