#include "core/models/vae/resnet_block_2d.h"

#include <torch/torch.h>

namespace ditserve::models {
namespace {

// The VAE builds every norm with eps 1e-6 (resnet_eps).
constexpr double kVaeNormEps = 1e-6;

}  // namespace

torch::nn::GroupNorm VaeGroupNorm(int64_t groups, int64_t channels) {
  return torch::nn::GroupNorm(
      torch::nn::GroupNormOptions(groups, channels).eps(kVaeNormEps));
}

Conv2d Conv3x3(int64_t in_channels, int64_t out_channels) {
  return Conv2d(
      torch::nn::Conv2dOptions(in_channels, out_channels, 3).padding(1));
}

ResnetBlock2DImpl::ResnetBlock2DImpl(int64_t in_channels, int64_t out_channels,
                                     int64_t groups)
    : norm1_(register_module("norm1", VaeGroupNorm(groups, in_channels))),
      conv1_(register_module("conv1", Conv3x3(in_channels, out_channels))),
      norm2_(register_module("norm2", VaeGroupNorm(groups, out_channels))),
      conv2_(register_module("conv2", Conv3x3(out_channels, out_channels))) {
  if (in_channels != out_channels) {
    conv_shortcut_ = register_module(
        "conv_shortcut",
        Conv2d(torch::nn::Conv2dOptions(in_channels, out_channels, 1)));
  }
}

// The activations and the residual sum go into tensors this block just made:
// at decode sizes each fresh one is megabytes of page faults.
at::Tensor ResnetBlock2DImpl::Forward(const at::Tensor& x) {
  at::Tensor h = norm1_->forward(x);
  h = conv1_->forward(at::silu_(h));
  h = norm2_->forward(h);
  h = conv2_->forward(at::silu_(h));
  return h.add_(conv_shortcut_ ? conv_shortcut_->forward(x) : x);
}

}  // namespace ditserve::models
