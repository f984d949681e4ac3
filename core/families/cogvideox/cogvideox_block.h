#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_BLOCK_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_BLOCK_H_

// diffusers' CogVideoXBlock over the joint sequence [text | video]. Both
// streams share every weight except their modulation: the blocks take the
// sequence as one tensor and the count of its leading text tokens, so that a
// sequence-parallel shard (a contiguous piece of the sequence, perhaps all
// text, all video or padding at its end) runs the same code.

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "core/families/cogvideox/cogvideox_transformer_config.h"
#include "core/models/layers/attention.h"
#include "core/models/layers/feed_forward.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/rotary_embedding.h"

namespace ditserve::families {

// A sequence [B, S, dim] whose first `text_tokens` tokens are text and the
// rest video (or padding, which the attention's key mask hides).
struct JointTokens {
  at::Tensor states;
  int64_t text_tokens = 0;
};

struct LayerNormZeroOutput {
  // norm(x) * (1 + scale) + shift with each stream's scale and shift.
  at::Tensor normed;
  // [B, 1, dim] each: the residual gates of the two streams.
  at::Tensor text_gate;
  at::Tensor video_gate;
};

// diffusers CogVideoXLayerNormZero: one affine LayerNorm; `linear` projects
// SiLU(temb) to (shift, scale, gate) of the video stream, then of the text.
class CogVideoXLayerNormZeroImpl : public torch::nn::Module {
 public:
  CogVideoXLayerNormZeroImpl(int64_t conditioning_dim, int64_t dim, double eps);

  LayerNormZeroOutput Forward(const JointTokens& x, const at::Tensor& temb);

 private:
  models::Linear linear_;
  torch::nn::LayerNorm norm_;
};
TORCH_MODULE(CogVideoXLayerNormZero);

// diffusers Attention with CogVideoXAttnProcessor2_0: q, k, v over the
// joint sequence, an affine per-head LayerNorm (eps 1e-6) on q and k, then
// the RoPE when the model has one, attention through `attention`.
class CogVideoXAttentionImpl : public torch::nn::Module {
 public:
  CogVideoXAttentionImpl(const CogVideoXTransformerConfig& config,
                         std::shared_ptr<models::Attention> attention);

  // `rotary`: one row per token of `x` (identity rows where no rotation
  // applies); `key_mask` as models::Attention takes it.
  at::Tensor Forward(const at::Tensor& x,
                     const std::optional<models::RotaryTables>& rotary,
                     const std::optional<at::Tensor>& key_mask);

 private:
  // [B, S, H * D] -> [B, H, S, D].
  at::Tensor Heads(const at::Tensor& x) const;

  int64_t heads_;
  int64_t head_dim_;
  std::shared_ptr<models::Attention> attention_;
  models::Linear to_q_{nullptr};
  models::Linear to_k_{nullptr};
  models::Linear to_v_{nullptr};
  torch::nn::LayerNorm norm_q_{nullptr};
  torch::nn::LayerNorm norm_k_{nullptr};
  models::Linear to_out_{nullptr};
};
TORCH_MODULE(CogVideoXAttention);

class CogVideoXBlockImpl : public torch::nn::Module {
 public:
  CogVideoXBlockImpl(const CogVideoXTransformerConfig& config,
                     std::shared_ptr<models::Attention> attention);

  // The block on `x`, conditioned on temb [B, time_embed_dim].
  JointTokens Forward(const JointTokens& x, const at::Tensor& temb,
                      const std::optional<models::RotaryTables>& rotary,
                      const std::optional<at::Tensor>& key_mask);

 private:
  CogVideoXLayerNormZero norm1_{nullptr};
  CogVideoXAttention attn1_{nullptr};
  CogVideoXLayerNormZero norm2_{nullptr};
  models::FeedForward ff_{nullptr};
};
TORCH_MODULE(CogVideoXBlock);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_BLOCK_H_
