#include "core/models/text/t5_layers.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <optional>

#include "core/models/layers/attention.h"
#include "core/models/layers/rms_norm.h"

namespace ditserve::models {
namespace {

Linear LinearNoBias(int64_t in, int64_t out) {
  return Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// T5Attention._relative_position_bucket with bidirectional=True, in the same
// operations (float32 log, truncation to long) so the buckets are identical.
at::Tensor RelativePositionBucket(const at::Tensor& relative_position,
                                  int64_t num_buckets, int64_t max_distance) {
  const int64_t half = num_buckets / 2;
  at::Tensor buckets = (relative_position > 0).to(at::kLong) * half;
  const at::Tensor distance = at::abs(relative_position);
  const int64_t max_exact = half / 2;
  at::Tensor if_large =
      max_exact +
      (at::log(distance.to(at::kFloat) / static_cast<double>(max_exact)) /
       std::log(static_cast<double>(max_distance) / max_exact) *
       static_cast<double>(half - max_exact))
          .to(at::kLong);
  if_large = at::clamp_max(if_large, half - 1);
  return buckets + at::where(distance < max_exact, distance, if_large);
}

// T5's float16 overflow guard: clamp to just below the largest finite value.
at::Tensor ClampFloat16(const at::Tensor& x) {
  if (x.scalar_type() != at::kHalf) return x;
  const double max = std::numeric_limits<c10::Half>::max();
  const double limit = at::isinf(x).any().item<bool>() ? max - 1000 : max;
  return at::clamp(x, -limit, limit);
}

}  // namespace

T5LayerNormImpl::T5LayerNormImpl(int64_t dim, double eps) : eps_(eps) {
  weight_ = register_parameter("weight", torch::ones({dim}));
}

at::Tensor T5LayerNormImpl::Forward(const at::Tensor& x) {
  return RmsNorm(x, weight_, eps_);
}

T5AttentionImpl::T5AttentionImpl(const T5EncoderConfig& config,
                                 bool has_relative_attention_bias)
    : heads_(config.num_heads),
      head_dim_(config.d_kv),
      num_buckets_(config.relative_attention_num_buckets),
      max_distance_(config.relative_attention_max_distance) {
  const int64_t inner = config.num_heads * config.d_kv;
  q_ = register_module("q", LinearNoBias(config.d_model, inner));
  k_ = register_module("k", LinearNoBias(config.d_model, inner));
  v_ = register_module("v", LinearNoBias(config.d_model, inner));
  o_ = register_module("o", LinearNoBias(inner, config.d_model));
  if (has_relative_attention_bias) {
    relative_attention_bias_ = register_module(
        "relative_attention_bias", Embedding(num_buckets_, config.num_heads));
  }
}

at::Tensor T5AttentionImpl::ComputeBias(int64_t query_length,
                                        int64_t key_length) {
  const at::Tensor weight = relative_attention_bias_->weight;
  const auto long_options =
      at::TensorOptions(at::kLong).device(weight.device());
  const at::Tensor context =
      at::arange(query_length, long_options).unsqueeze(1);
  const at::Tensor memory = at::arange(key_length, long_options).unsqueeze(0);
  const at::Tensor buckets =
      RelativePositionBucket(memory - context, num_buckets_, max_distance_);
  // [S_q, S_k, heads] -> [1, heads, S_q, S_k]
  return relative_attention_bias_->forward(buckets)
      .permute({2, 0, 1})
      .unsqueeze(0);
}

at::Tensor T5AttentionImpl::Forward(const at::Tensor& hidden_states,
                                    const at::Tensor& position_bias) {
  const int64_t batch = hidden_states.size(0);
  const int64_t length = hidden_states.size(1);
  auto heads = [&](const at::Tensor& x) {
    return x.view({batch, length, heads_, head_dim_}).transpose(1, 2);
  };
  const at::Tensor attended =
      ScaledDotProductAttention(
          heads(q_->forward(hidden_states)), heads(k_->forward(hidden_states)),
          heads(v_->forward(hidden_states)), position_bias, /*scale=*/1.0,
          /*return_log_sum_exp=*/false)
          .output;
  return o_->forward(
      attended.transpose(1, 2).reshape({batch, length, heads_ * head_dim_}));
}

T5LayerSelfAttentionImpl::T5LayerSelfAttentionImpl(
    const T5EncoderConfig& config, bool has_relative_attention_bias) {
  self_attention_ = register_module(
      "SelfAttention", T5Attention(config, has_relative_attention_bias));
  layer_norm_ = register_module(
      "layer_norm", T5LayerNorm(config.d_model, config.layer_norm_epsilon));
}

at::Tensor T5LayerSelfAttentionImpl::Forward(const at::Tensor& hidden_states,
                                             const at::Tensor& position_bias) {
  return hidden_states +
         self_attention_->Forward(layer_norm_->Forward(hidden_states),
                                  position_bias);
}

T5LayerFFImpl::T5LayerFFImpl(const T5EncoderConfig& config)
    : activation_(config.dense_act_fn), gated_(config.is_gated_act) {
  auto dense =
      register_module("DenseReluDense", std::make_shared<torch::nn::Module>());
  if (gated_) {
    wi_0_ = dense->register_module("wi_0",
                                   LinearNoBias(config.d_model, config.d_ff));
    wi_1_ = dense->register_module("wi_1",
                                   LinearNoBias(config.d_model, config.d_ff));
  } else {
    wi_ =
        dense->register_module("wi", LinearNoBias(config.d_model, config.d_ff));
  }
  wo_ = dense->register_module("wo", LinearNoBias(config.d_ff, config.d_model));
  layer_norm_ = register_module(
      "layer_norm", T5LayerNorm(config.d_model, config.layer_norm_epsilon));
}

at::Tensor T5LayerFFImpl::Forward(const at::Tensor& hidden_states) {
  const at::Tensor x = layer_norm_->Forward(hidden_states);
  const at::Tensor hidden =
      gated_ ? ApplyTextActivation(activation_, wi_0_->forward(x)) *
                   wi_1_->forward(x)
             : ApplyTextActivation(activation_, wi_->forward(x));
  // wo is float32 in a float16 model (LoadT5EncoderModel); the residual
  // stream then continues in float32, as in transformers.
  return hidden_states + wo_->forward(hidden.to(wo_->weight.scalar_type()));
}

T5BlockImpl::T5BlockImpl(const T5EncoderConfig& config,
                         bool has_relative_attention_bias) {
  auto layer = register_module("layer", torch::nn::ModuleList());
  self_attention_ = T5LayerSelfAttention(config, has_relative_attention_bias);
  feed_forward_ = T5LayerFF(config);
  layer->push_back(self_attention_);
  layer->push_back(feed_forward_);
}

at::Tensor T5BlockImpl::Forward(const at::Tensor& hidden_states,
                                const at::Tensor& position_bias) {
  const at::Tensor attended =
      ClampFloat16(self_attention_->Forward(hidden_states, position_bias));
  return ClampFloat16(feed_forward_->Forward(attended));
}

}  // namespace ditserve::models
