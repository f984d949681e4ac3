#ifndef DITSERVE_CORE_MODELS_TEXT_T5_LAYERS_H_
#define DITSERVE_CORE_MODELS_TEXT_T5_LAYERS_H_

// The pieces of transformers' T5 encoder stack, under transformers' class and
// attribute names (`layer.0.SelfAttention.q`, `layer.1.DenseReluDense.wi_0`).

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "core/models/layers/embedding.h"
#include "core/models/layers/linear.h"
#include "core/models/text/t5_encoder_config.h"

namespace ditserve::models {

// T5LayerNorm: RMS norm without mean subtraction or bias, statistics in
// float32. Parameter `weight`.
class T5LayerNormImpl : public torch::nn::Module {
 public:
  T5LayerNormImpl(int64_t dim, double eps);
  at::Tensor Forward(const at::Tensor& x);

 private:
  at::Tensor weight_;
  double eps_;
};
TORCH_MODULE(T5LayerNorm);

// T5Attention of the encoder: no 1/sqrt(d) scaling; the block that owns
// `relative_attention_bias` computes the position bias every block adds.
class T5AttentionImpl : public torch::nn::Module {
 public:
  T5AttentionImpl(const T5EncoderConfig& config,
                  bool has_relative_attention_bias);

  // [1, heads, query_length, key_length] from the bidirectional buckets of
  // (key position - query position). Only with has_relative_attention_bias.
  at::Tensor ComputeBias(int64_t query_length, int64_t key_length);
  // `position_bias` (bias plus mask) broadcasts to [B, heads, S, S].
  at::Tensor Forward(const at::Tensor& hidden_states,
                     const at::Tensor& position_bias);

 private:
  int64_t heads_;
  int64_t head_dim_;
  int64_t num_buckets_;
  int64_t max_distance_;
  Linear q_{nullptr};
  Linear k_{nullptr};
  Linear v_{nullptr};
  Linear o_{nullptr};
  Embedding relative_attention_bias_{nullptr};
};
TORCH_MODULE(T5Attention);

// T5LayerSelfAttention: x + SelfAttention(layer_norm(x)).
class T5LayerSelfAttentionImpl : public torch::nn::Module {
 public:
  T5LayerSelfAttentionImpl(const T5EncoderConfig& config,
                           bool has_relative_attention_bias);
  T5Attention attention() const { return self_attention_; }
  at::Tensor Forward(const at::Tensor& hidden_states,
                     const at::Tensor& position_bias);

 private:
  T5Attention self_attention_{nullptr};
  T5LayerNorm layer_norm_{nullptr};
};
TORCH_MODULE(T5LayerSelfAttention);

// T5LayerFF: x + DenseReluDense(layer_norm(x)), where DenseReluDense is
// T5DenseGatedActDense (wo(act(wi_0 x) * wi_1 x)) or T5DenseActDense
// (wo(act(wi x))).
class T5LayerFFImpl : public torch::nn::Module {
 public:
  explicit T5LayerFFImpl(const T5EncoderConfig& config);
  at::Tensor Forward(const at::Tensor& hidden_states);

 private:
  TextActivation activation_;
  bool gated_;
  Linear wi_{nullptr};
  Linear wi_0_{nullptr};
  Linear wi_1_{nullptr};
  Linear wo_{nullptr};
  T5LayerNorm layer_norm_{nullptr};
};
TORCH_MODULE(T5LayerFF);

// T5Block of the encoder: `layer.0` self-attention, `layer.1` feed-forward;
// float16 activations are clamped after each, as transformers does.
class T5BlockImpl : public torch::nn::Module {
 public:
  T5BlockImpl(const T5EncoderConfig& config, bool has_relative_attention_bias);
  T5Attention attention() const { return self_attention_->attention(); }
  at::Tensor Forward(const at::Tensor& hidden_states,
                     const at::Tensor& position_bias);

 private:
  T5LayerSelfAttention self_attention_{nullptr};
  T5LayerFF feed_forward_{nullptr};
};
TORCH_MODULE(T5Block);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_T5_LAYERS_H_
