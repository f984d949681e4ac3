#include "core/models/text/clip_text_layers.h"

#include <torch/torch.h>

#include <cmath>

#include "core/models/layers/attention.h"
#include "core/models/text/text_encoder_inputs.h"

namespace ditserve::models {
namespace {

torch::nn::LayerNorm MakeLayerNorm(const CLIPTextConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.hidden_size})
                                  .eps(config.layer_norm_eps));
}

// [1, 1, S, S]: finfo(dtype).min above the diagonal (transformers'
// _create_4d_causal_attention_mask).
at::Tensor CausalBias(int64_t length, c10::ScalarType dtype,
                      c10::Device device) {
  const at::Tensor above_diagonal =
      at::ones({length, length}, at::TensorOptions(at::kBool).device(device))
          .triu(1);
  return at::zeros({length, length}, at::TensorOptions(dtype).device(device))
      .masked_fill(above_diagonal, LowestFinite(dtype))
      .unsqueeze(0)
      .unsqueeze(0);
}

}  // namespace

CLIPTextEmbeddingsImpl::CLIPTextEmbeddingsImpl(const CLIPTextConfig& config) {
  token_embedding_ = register_module(
      "token_embedding", Embedding(config.vocab_size, config.hidden_size));
  position_embedding_ = register_module(
      "position_embedding",
      Embedding(config.max_position_embeddings, config.hidden_size));
}

at::Tensor CLIPTextEmbeddingsImpl::Forward(const at::Tensor& input_ids) {
  const at::Tensor positions =
      at::arange(input_ids.size(1),
                 at::TensorOptions(at::kLong).device(input_ids.device()));
  return token_embedding_->forward(input_ids) +
         position_embedding_->forward(positions).unsqueeze(0);
}

CLIPAttentionImpl::CLIPAttentionImpl(const CLIPTextConfig& config)
    : heads_(config.num_attention_heads),
      head_dim_(config.hidden_size / config.num_attention_heads) {
  const int64_t dim = config.hidden_size;
  q_proj_ = register_module("q_proj", Linear(dim, dim));
  k_proj_ = register_module("k_proj", Linear(dim, dim));
  v_proj_ = register_module("v_proj", Linear(dim, dim));
  out_proj_ = register_module("out_proj", Linear(dim, dim));
}

at::Tensor CLIPAttentionImpl::Forward(const at::Tensor& hidden_states,
                                      const at::Tensor& bias) {
  const int64_t batch = hidden_states.size(0);
  const int64_t length = hidden_states.size(1);
  auto heads = [&](const at::Tensor& x) {
    return x.view({batch, length, heads_, head_dim_}).transpose(1, 2);
  };
  const at::Tensor attended =
      ScaledDotProductAttention(
          heads(q_proj_->forward(hidden_states)),
          heads(k_proj_->forward(hidden_states)),
          heads(v_proj_->forward(hidden_states)), bias,
          /*scale=*/1.0 / std::sqrt(static_cast<double>(head_dim_)),
          /*return_log_sum_exp=*/false)
          .output;
  return out_proj_->forward(
      attended.transpose(1, 2).reshape({batch, length, heads_ * head_dim_}));
}

CLIPMLPImpl::CLIPMLPImpl(const CLIPTextConfig& config)
    : activation_(config.hidden_act) {
  fc1_ = register_module("fc1",
                         Linear(config.hidden_size, config.intermediate_size));
  fc2_ = register_module("fc2",
                         Linear(config.intermediate_size, config.hidden_size));
}

at::Tensor CLIPMLPImpl::Forward(const at::Tensor& x) {
  return fc2_->forward(ApplyTextActivation(activation_, fc1_->forward(x)));
}

CLIPEncoderLayerImpl::CLIPEncoderLayerImpl(const CLIPTextConfig& config) {
  self_attn_ = register_module("self_attn", CLIPAttention(config));
  layer_norm1_ = register_module("layer_norm1", MakeLayerNorm(config));
  mlp_ = register_module("mlp", CLIPMLP(config));
  layer_norm2_ = register_module("layer_norm2", MakeLayerNorm(config));
}

at::Tensor CLIPEncoderLayerImpl::Forward(const at::Tensor& hidden_states,
                                         const at::Tensor& bias) {
  const at::Tensor attended =
      hidden_states +
      self_attn_->Forward(layer_norm1_->forward(hidden_states), bias);
  return attended + mlp_->Forward(layer_norm2_->forward(attended));
}

CLIPTextTransformerImpl::CLIPTextTransformerImpl(const CLIPTextConfig& config)
    : eos_token_id_(config.eos_token_id) {
  embeddings_ = register_module("embeddings", CLIPTextEmbeddings(config));
  auto encoder =
      register_module("encoder", std::make_shared<torch::nn::Module>());
  auto layer_list = encoder->register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    layers_.push_back(CLIPEncoderLayer(config));
    layer_list->push_back(layers_.back());
  }
  final_layer_norm_ =
      register_module("final_layer_norm", MakeLayerNorm(config));
}

CLIPTextTransformerOutput CLIPTextTransformerImpl::Forward(
    const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask) {
  CLIPTextTransformerOutput out;
  at::Tensor hidden = embeddings_->Forward(input_ids);
  at::Tensor bias =
      CausalBias(input_ids.size(1), hidden.scalar_type(), hidden.device());
  if (attention_mask.has_value()) {
    bias = bias + AdditiveKeyMask(*attention_mask, hidden.scalar_type(),
                                  hidden.device());
  }
  out.hidden_states.push_back(hidden);
  for (CLIPEncoderLayer& layer : layers_) {
    hidden = layer->Forward(hidden, bias);
    out.hidden_states.push_back(hidden);
  }
  out.last_hidden_state = final_layer_norm_->forward(hidden);
  out.pooler_output = Pool(out.last_hidden_state, input_ids);
  return out;
}

at::Tensor CLIPTextTransformerImpl::Pool(const at::Tensor& last_hidden_state,
                                         const at::Tensor& input_ids) const {
  // eos_token_id == 2 is what the original CLIP configs carry although their
  // EOS is the largest id: transformers keeps the legacy argmax(input_ids)
  // for them; otherwise the first occurrence of the EOS id.
  const at::Tensor ids = input_ids.to(at::kInt);
  const at::Tensor positions =
      eos_token_id_ == 2 ? ids.argmax(-1)
                         : (ids == eos_token_id_).to(at::kInt).argmax(-1);
  const at::Tensor rows = at::arange(
      last_hidden_state.size(0),
      at::TensorOptions(at::kLong).device(last_hidden_state.device()));
  return last_hidden_state.index({rows, positions});
}

}  // namespace ditserve::models
