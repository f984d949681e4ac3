#include "core/families/flux/flux_attention.h"

#include <torch/torch.h>

#include <utility>

namespace ditserve::models {
namespace {

// FluxAttention's RMSNorm eps on q and k.
constexpr double kQkNormEps = 1e-6;

}  // namespace

FluxAttentionImpl::FluxAttentionImpl(Kind kind, int64_t dim, int64_t heads,
                                     int64_t head_dim,
                                     std::shared_ptr<Attention> attention)
    : heads_(heads), head_dim_(head_dim), attention_(std::move(attention)) {
  const int64_t inner = heads * head_dim;
  norm_q_ = register_module("norm_q", RMSNorm(head_dim, kQkNormEps));
  norm_k_ = register_module("norm_k", RMSNorm(head_dim, kQkNormEps));
  to_q_ = register_module("to_q", Linear(dim, inner));
  to_k_ = register_module("to_k", Linear(dim, inner));
  to_v_ = register_module("to_v", Linear(dim, inner));
  if (kind == Kind::kPreOnly) return;
  // to_out is a ModuleList in diffusers (index 1 is a training dropout).
  to_out_ = Linear(inner, dim);
  torch::nn::ModuleList to_out;
  to_out->push_back(to_out_);
  to_out->push_back(torch::nn::Dropout(0.0));
  register_module("to_out", to_out);
  norm_added_q_ =
      register_module("norm_added_q", RMSNorm(head_dim, kQkNormEps));
  norm_added_k_ =
      register_module("norm_added_k", RMSNorm(head_dim, kQkNormEps));
  add_q_proj_ = register_module("add_q_proj", Linear(dim, inner));
  add_k_proj_ = register_module("add_k_proj", Linear(dim, inner));
  add_v_proj_ = register_module("add_v_proj", Linear(dim, inner));
  to_add_out_ = register_module("to_add_out", Linear(inner, dim));
}

at::Tensor FluxAttentionImpl::Heads(const at::Tensor& x, Linear& projection,
                                    RMSNorm* norm) const {
  at::Tensor heads =
      projection->forward(x).view({x.size(0), x.size(1), heads_, head_dim_});
  if (norm != nullptr) heads = (*norm)->Forward(heads);
  return heads;
}

at::Tensor FluxAttentionImpl::Attend(const at::Tensor& q, const at::Tensor& k,
                                     const at::Tensor& v,
                                     const FluxSequence& sequence) {
  const at::Tensor attended = attention_->Attend(
      ApplyRotaryEmbedding(q, sequence.rotary, HeadLayout::kTokensFirst)
          .transpose(1, 2),
      ApplyRotaryEmbedding(k, sequence.rotary, HeadLayout::kTokensFirst)
          .transpose(1, 2),
      v.transpose(1, 2), sequence.key_mask);
  return attended.transpose(1, 2).flatten(2);
}

FluxJointAttentionOutput FluxAttentionImpl::ForwardJoint(
    const at::Tensor& image, const at::Tensor& text,
    const FluxSequence& sequence) {
  // Text then image tokens, joined along the tokens while each is still
  // one contiguous block per batch row.
  const at::Tensor q = at::cat(
      {Heads(text, add_q_proj_, &norm_added_q_), Heads(image, to_q_, &norm_q_)},
      /*dim=*/1);
  const at::Tensor k = at::cat(
      {Heads(text, add_k_proj_, &norm_added_k_), Heads(image, to_k_, &norm_k_)},
      /*dim=*/1);
  const at::Tensor v =
      at::cat({Heads(text, add_v_proj_, nullptr), Heads(image, to_v_, nullptr)},
              /*dim=*/1);
  const at::Tensor attended = Attend(q, k, v, sequence);
  const int64_t text_tokens = text.size(1);
  return {to_out_->forward(attended.slice(1, text_tokens)),
          to_add_out_->forward(attended.slice(1, 0, text_tokens))};
}

at::Tensor FluxAttentionImpl::ForwardPreOnly(const at::Tensor& x,
                                             const FluxSequence& sequence) {
  return Attend(Heads(x, to_q_, &norm_q_), Heads(x, to_k_, &norm_k_),
                Heads(x, to_v_, nullptr), sequence);
}

}  // namespace ditserve::models
