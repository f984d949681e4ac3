#ifndef DITSERVE_CORE_MODELS_VAE_RESNET_BLOCK_2D_H_
#define DITSERVE_CORE_MODELS_VAE_RESNET_BLOCK_2D_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "core/models/layers/conv.h"

namespace ditserve::models {

// diffusers ResnetBlock2D without a time embedding: GroupNorm, SiLU, 3x3 conv
// twice, plus a 1x1 conv_shortcut when the channel count changes.
class ResnetBlock2DImpl : public torch::nn::Module {
 public:
  ResnetBlock2DImpl(int64_t in_channels, int64_t out_channels, int64_t groups);

  at::Tensor Forward(const at::Tensor& x);

 private:
  torch::nn::GroupNorm norm1_;
  Conv2d conv1_;
  torch::nn::GroupNorm norm2_;
  Conv2d conv2_;
  Conv2d conv_shortcut_{nullptr};
};
TORCH_MODULE(ResnetBlock2D);

// Parameters shared by the VAE's GroupNorms and 3x3 convolutions.
torch::nn::GroupNorm VaeGroupNorm(int64_t groups, int64_t channels);
Conv2d Conv3x3(int64_t in_channels, int64_t out_channels);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_VAE_RESNET_BLOCK_2D_H_
