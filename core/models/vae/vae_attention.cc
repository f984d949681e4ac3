#include "core/models/vae/vae_attention.h"

#include <torch/torch.h>

#include <cmath>

#include "core/models/layers/attention.h"
#include "core/models/vae/resnet_block_2d.h"

namespace ditserve::models {

VaeAttentionImpl::VaeAttentionImpl(int64_t channels, int64_t groups)
    : group_norm_(
          register_module("group_norm", VaeGroupNorm(groups, channels))),
      to_q_(register_module("to_q", Linear(channels, channels))),
      to_k_(register_module("to_k", Linear(channels, channels))),
      to_v_(register_module("to_v", Linear(channels, channels))),
      to_out_(Linear(channels, channels)) {
  // to_out is a ModuleList in diffusers (index 1 is a training dropout).
  torch::nn::ModuleList to_out;
  to_out->push_back(to_out_);
  to_out->push_back(torch::nn::Dropout(0.0));
  register_module("to_out", to_out);
}

at::Tensor VaeAttentionImpl::Forward(const at::Tensor& x) {
  const int64_t batch = x.size(0);
  const int64_t channels = x.size(1);
  const int64_t height = x.size(2);
  const int64_t width = x.size(3);
  // [B, C, H, W] -> [B, H*W, C] pixels as tokens: a view of channels-last
  // activations.
  const at::Tensor tokens = group_norm_->forward(x)
                                .permute({0, 2, 3, 1})
                                .reshape({batch, height * width, channels});
  // One head: [B, 1, H*W, C].
  const at::Tensor q = to_q_->forward(tokens).unsqueeze(1);
  const at::Tensor k = to_k_->forward(tokens).unsqueeze(1);
  const at::Tensor v = to_v_->forward(tokens).unsqueeze(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(channels));
  const at::Tensor attended =
      ScaledDotProductAttention(q, k, v, std::nullopt, scale,
                                /*return_log_sum_exp=*/false)
          .output.squeeze(1);
  // Back to [B, C, H, W] in the layout of x: a sum takes its layout from
  // its operands, and a channels-last one would switch the convolutions
  // after it to channels-last in bfloat16 too, past that decode's
  // tolerance.
  return to_out_->forward(attended)
             .view({batch, height, width, channels})
             .permute({0, 3, 1, 2})
             .contiguous(x.suggest_memory_format()) +
         x;
}

}  // namespace ditserve::models
