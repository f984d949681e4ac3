#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_BLOCK_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_BLOCK_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "core/models/layers/attention.h"
#include "core/models/layers/feed_forward.h"
#include "core/models/layers/linear.h"

namespace ditserve::models {

// diffusers Attention with the default processor, as PixArt's blocks use it:
// to_q, to_k, to_v and to_out.0, scale 1 / sqrt(head_dim).
class PixArtAttentionImpl : public torch::nn::Module {
 public:
  PixArtAttentionImpl(int64_t query_dim, int64_t key_value_dim, int64_t heads,
                      int64_t head_dim, bool bias);

  // Self-attention over x [B, S, query_dim] through `attention`, which may
  // hold only this rank's part of the image sequence; `key_mask` as
  // Attention takes it.
  at::Tensor ForwardSelf(const at::Tensor& x, Attention& attention,
                         const std::optional<at::Tensor>& key_mask);

  // Cross-attention of x [B, S, query_dim] to the whole `context`
  // [B, S_k, key_value_dim] with an additive `key_bias` broadcasting to
  // [B, heads, S, S_k]. Every rank holds all of the text, so this is local
  // whatever part of the image sequence x is.
  at::Tensor ForwardCross(const at::Tensor& x, const at::Tensor& context,
                          const std::optional<at::Tensor>& key_bias);

 private:
  // [B, S, heads * head_dim] -> [B, heads, S, head_dim].
  at::Tensor SplitHeads(const at::Tensor& x) const;
  // [B, heads, S, head_dim] -> to_out.0([B, S, heads * head_dim]).
  at::Tensor MergeHeadsAndProject(const at::Tensor& x);

  int64_t heads_;
  int64_t head_dim_;
  Linear to_q_;
  Linear to_k_;
  Linear to_v_;
  Linear to_out_;
};
TORCH_MODULE(PixArtAttention);

// diffusers BasicTransformerBlock with norm_type "ada_norm_single": modulated
// self-attention (attn1), unmodulated cross-attention to the caption (attn2),
// modulated feed-forward; the six modulation vectors are the model's adaLN
// output plus this block's scale_shift_table.
class PixArtTransformerBlockImpl : public torch::nn::Module {
 public:
  PixArtTransformerBlockImpl(int64_t dim, int64_t heads, int64_t head_dim,
                             int64_t cross_attention_dim, bool attention_bias,
                             double norm_eps,
                             std::shared_ptr<Attention> attention);

  // x [B, S, dim], context [B, S_k, dim], modulation [B, 6 * dim];
  // `key_mask` (bool [B, S], false for padding) hides keys from attn1.
  at::Tensor Forward(const at::Tensor& x, const at::Tensor& context,
                     const std::optional<at::Tensor>& context_bias,
                     const at::Tensor& modulation,
                     const std::optional<at::Tensor>& key_mask);

 private:
  double norm_eps_;
  std::shared_ptr<Attention> attention_;
  at::Tensor scale_shift_table_;
  PixArtAttention attn1_;
  PixArtAttention attn2_;
  FeedForward ff_;
};
TORCH_MODULE(PixArtTransformerBlock);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_BLOCK_H_
