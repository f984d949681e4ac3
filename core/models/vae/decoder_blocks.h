#ifndef DITSERVE_CORE_MODELS_VAE_DECODER_BLOCKS_H_
#define DITSERVE_CORE_MODELS_VAE_DECODER_BLOCKS_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "core/models/layers/conv.h"
#include "core/models/vae/resnet_block_2d.h"
#include "core/models/vae/vae_attention.h"

namespace ditserve::models {

// diffusers UNetMidBlock2D as the VAE decoder builds it: resnets.0,
// attentions.0 (when add_attention), resnets.1.
class UNetMidBlock2DImpl : public torch::nn::Module {
 public:
  UNetMidBlock2DImpl(int64_t channels, int64_t groups, bool add_attention);

  at::Tensor Forward(const at::Tensor& x);

 private:
  std::vector<ResnetBlock2D> resnets_;
  VaeAttention attention_{nullptr};
};
TORCH_MODULE(UNetMidBlock2D);

// diffusers UpDecoderBlock2D: `num_layers` resnets, then (unless last)
// upsamplers.0 = nearest 2x upsampling followed by a 3x3 conv.
class UpDecoderBlock2DImpl : public torch::nn::Module {
 public:
  UpDecoderBlock2DImpl(int64_t in_channels, int64_t out_channels,
                       int64_t num_layers, int64_t groups, bool add_upsample);

  at::Tensor Forward(const at::Tensor& x);

 private:
  std::vector<ResnetBlock2D> resnets_;
  Conv2d upsample_conv_{nullptr};
};
TORCH_MODULE(UpDecoderBlock2D);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_VAE_DECODER_BLOCKS_H_
