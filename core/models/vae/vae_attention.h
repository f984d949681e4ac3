#ifndef DITSERVE_CORE_MODELS_VAE_VAE_ATTENTION_H_
#define DITSERVE_CORE_MODELS_VAE_VAE_ATTENTION_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "core/models/layers/linear.h"

namespace ditserve::models {

// The VAE mid-block's diffusers Attention: GroupNorm, then single-head
// self-attention over all pixels with linear q/k/v (to_q, to_k, to_v) and
// to_out.0, plus the residual. Always local: the decoder is not sequence
// parallel.
class VaeAttentionImpl : public torch::nn::Module {
 public:
  VaeAttentionImpl(int64_t channels, int64_t groups);

  // x [B, C, H, W] -> [B, C, H, W].
  at::Tensor Forward(const at::Tensor& x);

 private:
  torch::nn::GroupNorm group_norm_;
  Linear to_q_;
  Linear to_k_;
  Linear to_v_;
  Linear to_out_;
};
TORCH_MODULE(VaeAttention);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_VAE_VAE_ATTENTION_H_
