#include "core/families/pixart/pixart_transformer_block.h"

#include <torch/torch.h>

#include <cmath>
#include <utility>
#include <vector>

#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/attention.h"

namespace ditserve::models {
namespace {

// BasicTransformerBlock's FeedForward widens by 4.
constexpr int64_t kFeedForwardMult = 4;
// Modulation vectors per block: shift, scale, gate (attention), shift,
// scale, gate (MLP).
constexpr int64_t kModulationParts = 6;

Linear MakeLinear(int64_t in, int64_t out, bool bias) {
  return Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

}  // namespace

PixArtAttentionImpl::PixArtAttentionImpl(int64_t query_dim,
                                         int64_t key_value_dim, int64_t heads,
                                         int64_t head_dim, bool bias)
    : heads_(heads),
      head_dim_(head_dim),
      to_q_(register_module("to_q",
                            MakeLinear(query_dim, heads * head_dim, bias))),
      to_k_(register_module("to_k",
                            MakeLinear(key_value_dim, heads * head_dim, bias))),
      to_v_(register_module("to_v",
                            MakeLinear(key_value_dim, heads * head_dim, bias))),
      to_out_(Linear(heads * head_dim, query_dim)) {
  // to_out is a ModuleList in diffusers (index 1 is a training dropout).
  torch::nn::ModuleList to_out;
  to_out->push_back(to_out_);
  to_out->push_back(torch::nn::Dropout(0.0));
  register_module("to_out", to_out);
}

at::Tensor PixArtAttentionImpl::SplitHeads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, head_dim_}).transpose(1, 2);
}

at::Tensor PixArtAttentionImpl::MergeHeadsAndProject(const at::Tensor& x) {
  return to_out_->forward(x.transpose(1, 2).flatten(2));
}

at::Tensor PixArtAttentionImpl::ForwardSelf(
    const at::Tensor& x, Attention& attention,
    const std::optional<at::Tensor>& key_mask) {
  return MergeHeadsAndProject(attention.Attend(
      SplitHeads(to_q_->forward(x)), SplitHeads(to_k_->forward(x)),
      SplitHeads(to_v_->forward(x)), key_mask));
}

at::Tensor PixArtAttentionImpl::ForwardCross(
    const at::Tensor& x, const at::Tensor& context,
    const std::optional<at::Tensor>& key_bias) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim_));
  return MergeHeadsAndProject(
      ScaledDotProductAttention(SplitHeads(to_q_->forward(x)),
                                SplitHeads(to_k_->forward(context)),
                                SplitHeads(to_v_->forward(context)), key_bias,
                                scale, /*return_log_sum_exp=*/false)
          .output);
}

PixArtTransformerBlockImpl::PixArtTransformerBlockImpl(
    int64_t dim, int64_t heads, int64_t head_dim, int64_t cross_attention_dim,
    bool attention_bias, double norm_eps, std::shared_ptr<Attention> attention)
    : norm_eps_(norm_eps),
      attention_(std::move(attention)),
      attn1_(register_module(
          "attn1", PixArtAttention(dim, dim, heads, head_dim, attention_bias))),
      attn2_(register_module(
          "attn2", PixArtAttention(dim, cross_attention_dim, heads, head_dim,
                                   attention_bias))),
      ff_(register_module("ff", FeedForward(dim, dim, kFeedForwardMult))) {
  scale_shift_table_ = register_parameter(
      "scale_shift_table", torch::zeros({kModulationParts, dim}));
}

at::Tensor PixArtTransformerBlockImpl::Forward(
    const at::Tensor& x, const at::Tensor& context,
    const std::optional<at::Tensor>& context_bias, const at::Tensor& modulation,
    const std::optional<at::Tensor>& key_mask) {
  // [B, 1, dim] each, broadcast over the tokens.
  const std::vector<at::Tensor> parts =
      (scale_shift_table_.unsqueeze(0) +
       modulation.reshape({x.size(0), kModulationParts, -1}))
          .chunk(kModulationParts, /*dim=*/1);
  const at::Tensor& shift_msa = parts[0];
  const at::Tensor& scale_msa = parts[1];
  const at::Tensor& gate_msa = parts[2];
  const at::Tensor& shift_mlp = parts[3];
  const at::Tensor& scale_mlp = parts[4];
  const at::Tensor& gate_mlp = parts[5];

  at::Tensor hidden = x;
  const at::Tensor attention_input =
      PlainLayerNorm(hidden, norm_eps_) * (1 + scale_msa) + shift_msa;
  hidden =
      gate_msa * attn1_->ForwardSelf(attention_input, *attention_, key_mask) +
      hidden;
  // PixArt applies no norm before the cross-attention.
  hidden = attn2_->ForwardCross(hidden, context, context_bias) + hidden;
  const at::Tensor mlp_input =
      PlainLayerNorm(hidden, norm_eps_) * (1 + scale_mlp) + shift_mlp;
  return gate_mlp * ff_->Forward(mlp_input) + hidden;
}

}  // namespace ditserve::models
