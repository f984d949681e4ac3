#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_BLOCKS_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_BLOCKS_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "core/families/cogvideox/causal_conv3d.h"
#include "core/models/layers/conv.h"

namespace ditserve::families {

// The CogVideoX decoder's building blocks (diffusers
// autoencoder_kl_cogvideox.py and CogVideoXUpsample3D). Activations are
// [B, C, T, H, W]; `zq` is the latent chunk being decoded,
// [B, latent_channels, t, h, w].

// diffusers CogVideoXSpatialNorm3D: GroupNorm(f) * conv_y(zq') + conv_b(zq'),
// zq' being zq nearest-interpolated to f's (T, H, W). With an odd T > 1 the
// first frame and the rest are interpolated separately, as the temporal
// up-sampling kept the first frame single.
class SpatialNorm3DImpl : public torch::nn::Module {
 public:
  SpatialNorm3DImpl(int64_t channels, int64_t zq_channels, int64_t groups);

  at::Tensor Forward(const at::Tensor& f, const at::Tensor& zq,
                     CausalConvCache& cache);

 private:
  torch::nn::GroupNorm norm_layer_;
  CausalConv3d conv_y_;
  CausalConv3d conv_b_;
};
TORCH_MODULE(SpatialNorm3D);

// diffusers CogVideoXResnetBlock3D as the decoder builds it: spatial norms,
// SiLU and causal 3x3x3 convs twice, plus a 1x1x1 Conv3d `conv_shortcut`
// (not causal) when the channel count changes. No time embedding.
class ResnetBlock3DImpl : public torch::nn::Module {
 public:
  ResnetBlock3DImpl(int64_t in_channels, int64_t out_channels,
                    int64_t zq_channels, int64_t groups);

  at::Tensor Forward(const at::Tensor& x, const at::Tensor& zq,
                     CausalConvCache& cache);

 private:
  SpatialNorm3D norm1_;
  CausalConv3d conv1_;
  SpatialNorm3D norm2_;
  CausalConv3d conv2_;
  models::Conv3d conv_shortcut_{nullptr};
};
TORCH_MODULE(ResnetBlock3D);

// diffusers CogVideoXUpsample3D: nearest 2x up-sampling of H and W (and of T
// with compress_time, except the first frame of an odd frame count), then a
// 3x3 Conv2d (`conv`) on every frame.
class Upsample3DImpl : public torch::nn::Module {
 public:
  Upsample3DImpl(int64_t channels, bool compress_time);

  at::Tensor Forward(const at::Tensor& x);

 private:
  bool compress_time_;
  models::Conv2d conv_;
};
TORCH_MODULE(Upsample3D);

// diffusers CogVideoXUpBlock3D: `num_layers` resnets, then (with
// add_upsample) upsamplers.0. The decoder's mid block is the same without
// the up-sampler (CogVideoXMidBlock3D holds only `resnets`).
class UpBlock3DImpl : public torch::nn::Module {
 public:
  UpBlock3DImpl(int64_t in_channels, int64_t out_channels, int64_t num_layers,
                int64_t zq_channels, int64_t groups, bool add_upsample,
                bool compress_time);

  at::Tensor Forward(const at::Tensor& x, const at::Tensor& zq,
                     CausalConvCache& cache);

 private:
  std::vector<ResnetBlock3D> resnets_;
  Upsample3D upsampler_{nullptr};
};
TORCH_MODULE(UpBlock3D);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_BLOCKS_H_
