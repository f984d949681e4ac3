#include "core/families/cogvideox/cogvideox_block.h"

#include <torch/torch.h>

#include <utility>
#include <vector>

namespace ditserve::families {
namespace {

// Attention(..., qk_norm="layer_norm", eps=1e-6) in CogVideoXBlock.
constexpr double kQkNormEps = 1e-6;
constexpr int64_t kFeedForwardMult = 4;

torch::nn::LayerNorm AffineLayerNorm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(
      torch::nn::LayerNormOptions({dim}).eps(eps).elementwise_affine(true));
}

// The text part [0, text_tokens) and the video part of a joint tensor.
std::pair<at::Tensor, at::Tensor> SplitStreams(const at::Tensor& x,
                                               int64_t text_tokens) {
  return {x.slice(1, 0, text_tokens), x.slice(1, text_tokens)};
}

// x + gate * update, each stream with its own gate.
at::Tensor GatedResidual(const JointTokens& x, const at::Tensor& update,
                         const at::Tensor& text_gate,
                         const at::Tensor& video_gate) {
  const auto [text, video] = SplitStreams(x.states, x.text_tokens);
  const auto [text_update, video_update] = SplitStreams(update, x.text_tokens);
  return at::cat(
      {text + text_gate * text_update, video + video_gate * video_update},
      /*dim=*/1);
}

}  // namespace

CogVideoXLayerNormZeroImpl::CogVideoXLayerNormZeroImpl(int64_t conditioning_dim,
                                                       int64_t dim, double eps)
    : linear_(
          register_module("linear", models::Linear(conditioning_dim, 6 * dim))),
      norm_(register_module("norm", AffineLayerNorm(dim, eps))) {}

LayerNormZeroOutput CogVideoXLayerNormZeroImpl::Forward(
    const JointTokens& x, const at::Tensor& temb) {
  const std::vector<at::Tensor> chunks =
      linear_->forward(at::silu(temb)).unsqueeze(1).chunk(6, /*dim=*/2);
  const auto [text, video] =
      SplitStreams(norm_->forward(x.states), x.text_tokens);
  // Chunks: video shift, scale, gate, then text shift, scale, gate.
  LayerNormZeroOutput out;
  out.normed = at::cat(
      {text * (1 + chunks[4]) + chunks[3], video * (1 + chunks[1]) + chunks[0]},
      /*dim=*/1);
  out.text_gate = chunks[5];
  out.video_gate = chunks[2];
  return out;
}

CogVideoXAttentionImpl::CogVideoXAttentionImpl(
    const CogVideoXTransformerConfig& config,
    std::shared_ptr<models::Attention> attention)
    : heads_(config.num_attention_heads),
      head_dim_(config.attention_head_dim),
      attention_(std::move(attention)) {
  const int64_t dim = config.inner_dim();
  const auto projection = [&] {
    return models::Linear(
        torch::nn::LinearOptions(dim, dim).bias(config.attention_bias));
  };
  to_q_ = register_module("to_q", projection());
  to_k_ = register_module("to_k", projection());
  to_v_ = register_module("to_v", projection());
  norm_q_ = register_module("norm_q", AffineLayerNorm(head_dim_, kQkNormEps));
  norm_k_ = register_module("norm_k", AffineLayerNorm(head_dim_, kQkNormEps));
  // to_out is a ModuleList in diffusers (index 1 is a training dropout).
  to_out_ = models::Linear(dim, dim);
  torch::nn::ModuleList to_out;
  to_out->push_back(to_out_);
  to_out->push_back(torch::nn::Dropout(0.0));
  register_module("to_out", to_out);
}

at::Tensor CogVideoXAttentionImpl::Heads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, head_dim_}).transpose(1, 2);
}

at::Tensor CogVideoXAttentionImpl::Forward(
    const at::Tensor& x, const std::optional<models::RotaryTables>& rotary,
    const std::optional<at::Tensor>& key_mask) {
  at::Tensor q = norm_q_->forward(Heads(to_q_->forward(x)));
  at::Tensor k = norm_k_->forward(Heads(to_k_->forward(x)));
  if (rotary.has_value()) {
    q = models::ApplyRotaryEmbedding(q, *rotary,
                                     models::HeadLayout::kHeadsFirst);
    k = models::ApplyRotaryEmbedding(k, *rotary,
                                     models::HeadLayout::kHeadsFirst);
  }
  const at::Tensor attended =
      attention_->Attend(q, k, Heads(to_v_->forward(x)), key_mask);
  return to_out_->forward(attended.transpose(1, 2).flatten(2));
}

CogVideoXBlockImpl::CogVideoXBlockImpl(
    const CogVideoXTransformerConfig& config,
    std::shared_ptr<models::Attention> attention)
    : norm1_(register_module(
          "norm1",
          CogVideoXLayerNormZero(config.time_embed_dim, config.inner_dim(),
                                 config.norm_eps))),
      attn1_(register_module("attn1",
                             CogVideoXAttention(config, std::move(attention)))),
      norm2_(register_module(
          "norm2",
          CogVideoXLayerNormZero(config.time_embed_dim, config.inner_dim(),
                                 config.norm_eps))),
      ff_(register_module(
          "ff", models::FeedForward(config.inner_dim(), config.inner_dim(),
                                    kFeedForwardMult))) {}

JointTokens CogVideoXBlockImpl::Forward(
    const JointTokens& x, const at::Tensor& temb,
    const std::optional<models::RotaryTables>& rotary,
    const std::optional<at::Tensor>& key_mask) {
  const LayerNormZeroOutput attention_input = norm1_->Forward(x, temb);
  const JointTokens attended{
      GatedResidual(x,
                    attn1_->Forward(attention_input.normed, rotary, key_mask),
                    attention_input.text_gate, attention_input.video_gate),
      x.text_tokens};
  const LayerNormZeroOutput ff_input = norm2_->Forward(attended, temb);
  return {GatedResidual(attended, ff_->Forward(ff_input.normed),
                        ff_input.text_gate, ff_input.video_gate),
          x.text_tokens};
}

}  // namespace ditserve::families
