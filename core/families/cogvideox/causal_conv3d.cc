#include "core/families/cogvideox/causal_conv3d.h"

#include <torch/torch.h>

namespace ditserve::families {

at::Tensor& CausalConvCache::NextSlot() {
  if (next_ == slots_.size()) slots_.emplace_back();
  return slots_[next_++];
}

CausalConv3dImpl::CausalConv3dImpl(int64_t in_channels, int64_t out_channels,
                                   int64_t kernel_size)
    : time_pad_(kernel_size - 1),
      conv_(register_module(
          "conv", models::Conv3d(torch::nn::Conv3dOptions(
                                     in_channels, out_channels, kernel_size)
                                     .padding({0, (kernel_size - 1) / 2,
                                               (kernel_size - 1) / 2})))) {}

at::Tensor CausalConv3dImpl::Forward(const at::Tensor& x,
                                     CausalConvCache& cache) {
  if (time_pad_ == 0) return conv_->forward(x);
  at::Tensor& cached = cache.NextSlot();
  const at::Tensor front =
      cached.defined() ? cached
                       : x.slice(2, 0, 1).expand({-1, -1, time_pad_, -1, -1});
  const at::Tensor padded = at::cat({front, x}, 2);
  // A copy, so the cache does not keep the whole padded input alive.
  cached = padded.slice(2, padded.size(2) - time_pad_).clone();
  return conv_->forward(padded);
}

}  // namespace ditserve::families
