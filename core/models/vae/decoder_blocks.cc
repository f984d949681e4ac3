#include "core/models/vae/decoder_blocks.h"

#include <torch/torch.h>

namespace ditserve::models {

UNetMidBlock2DImpl::UNetMidBlock2DImpl(int64_t channels, int64_t groups,
                                       bool add_attention) {
  torch::nn::ModuleList resnets;
  for (int i = 0; i < 2; ++i) {
    resnets_.push_back(ResnetBlock2D(channels, channels, groups));
    resnets->push_back(resnets_.back());
  }
  register_module("resnets", resnets);
  if (add_attention) {
    attention_ = VaeAttention(channels, groups);
    torch::nn::ModuleList attentions;
    attentions->push_back(attention_);
    register_module("attentions", attentions);
  }
}

at::Tensor UNetMidBlock2DImpl::Forward(const at::Tensor& x) {
  at::Tensor h = resnets_[0]->Forward(x);
  if (attention_) h = attention_->Forward(h);
  return resnets_[1]->Forward(h);
}

UpDecoderBlock2DImpl::UpDecoderBlock2DImpl(int64_t in_channels,
                                           int64_t out_channels,
                                           int64_t num_layers, int64_t groups,
                                           bool add_upsample) {
  torch::nn::ModuleList resnets;
  for (int64_t i = 0; i < num_layers; ++i) {
    resnets_.push_back(ResnetBlock2D(i == 0 ? in_channels : out_channels,
                                     out_channels, groups));
    resnets->push_back(resnets_.back());
  }
  register_module("resnets", resnets);
  if (add_upsample) {
    // upsamplers.0 is diffusers' Upsample2D, whose only weights are `conv`.
    auto upsampler = std::make_shared<torch::nn::Module>();
    upsample_conv_ =
        upsampler->register_module("conv", Conv3x3(out_channels, out_channels));
    torch::nn::ModuleList upsamplers;
    upsamplers->push_back(upsampler);
    register_module("upsamplers", upsamplers);
  }
}

at::Tensor UpDecoderBlock2DImpl::Forward(const at::Tensor& x) {
  at::Tensor h = x;
  for (ResnetBlock2D& resnet : resnets_) h = resnet->Forward(h);
  if (!upsample_conv_) return h;
  h = at::upsample_nearest2d(h, {2 * h.size(2), 2 * h.size(3)});
  return upsample_conv_->forward(h);
}

}  // namespace ditserve::models
