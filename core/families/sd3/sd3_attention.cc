#include "core/families/sd3/sd3_attention.h"

#include <torch/torch.h>

#include <utility>

namespace ditserve::models {
namespace {

// Attention(..., eps=1e-6) in SD3's blocks.
constexpr double kQkNormEps = 1e-6;

}  // namespace

SD3AttentionImpl::SD3AttentionImpl(Kind kind, int64_t dim, int64_t heads,
                                   int64_t head_dim, bool qk_norm,
                                   std::shared_ptr<Attention> attention)
    : heads_(heads), head_dim_(head_dim), attention_(std::move(attention)) {
  const int64_t inner = heads * head_dim;
  to_q_ = register_module("to_q", Linear(dim, inner));
  to_k_ = register_module("to_k", Linear(dim, inner));
  to_v_ = register_module("to_v", Linear(dim, inner));
  // to_out is a ModuleList in diffusers (index 1 is a training dropout).
  to_out_ = Linear(inner, dim);
  torch::nn::ModuleList to_out;
  to_out->push_back(to_out_);
  to_out->push_back(torch::nn::Dropout(0.0));
  register_module("to_out", to_out);
  if (qk_norm) {
    norm_q_ = register_module("norm_q", RMSNorm(head_dim, kQkNormEps));
    norm_k_ = register_module("norm_k", RMSNorm(head_dim, kQkNormEps));
  }
  if (kind == Kind::kSelf) return;
  add_q_proj_ = register_module("add_q_proj", Linear(dim, inner));
  add_k_proj_ = register_module("add_k_proj", Linear(dim, inner));
  add_v_proj_ = register_module("add_v_proj", Linear(dim, inner));
  if (kind == Kind::kJoint) {
    to_add_out_ = register_module("to_add_out", Linear(inner, dim));
  }
  if (qk_norm) {
    norm_added_q_ =
        register_module("norm_added_q", RMSNorm(head_dim, kQkNormEps));
    norm_added_k_ =
        register_module("norm_added_k", RMSNorm(head_dim, kQkNormEps));
  }
}

at::Tensor SD3AttentionImpl::Heads(const at::Tensor& x, Linear& projection,
                                   RMSNorm& norm) const {
  at::Tensor heads = projection->forward(x)
                         .view({x.size(0), x.size(1), heads_, head_dim_})
                         .transpose(1, 2);
  if (!norm.is_empty()) heads = norm->Forward(heads);
  return heads;
}

at::Tensor SD3AttentionImpl::MergeHeads(const at::Tensor& x) {
  return x.transpose(1, 2).flatten(2);
}

SD3JointAttentionOutput SD3AttentionImpl::ForwardJoint(
    const at::Tensor& image, const at::Tensor& text,
    const std::optional<at::Tensor>& key_mask) {
  RMSNorm no_norm{nullptr};
  const at::Tensor q = at::cat(
      {Heads(image, to_q_, norm_q_), Heads(text, add_q_proj_, norm_added_q_)},
      /*dim=*/2);
  const at::Tensor k = at::cat(
      {Heads(image, to_k_, norm_k_), Heads(text, add_k_proj_, norm_added_k_)},
      /*dim=*/2);
  const at::Tensor v =
      at::cat({Heads(image, to_v_, no_norm), Heads(text, add_v_proj_, no_norm)},
              /*dim=*/2);
  const at::Tensor attended = MergeHeads(attention_->Attend(q, k, v, key_mask));
  const int64_t image_tokens = image.size(1);
  SD3JointAttentionOutput out;
  out.image = to_out_->forward(attended.slice(1, 0, image_tokens));
  if (!to_add_out_.is_empty()) {
    out.text = to_add_out_->forward(attended.slice(1, image_tokens));
  }
  return out;
}

at::Tensor SD3AttentionImpl::ForwardSelf(
    const at::Tensor& x, const std::optional<at::Tensor>& key_mask) {
  RMSNorm no_norm{nullptr};
  return to_out_->forward(MergeHeads(
      attention_->Attend(Heads(x, to_q_, norm_q_), Heads(x, to_k_, norm_k_),
                         Heads(x, to_v_, no_norm), key_mask)));
}

}  // namespace ditserve::models
