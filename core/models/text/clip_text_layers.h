#ifndef DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_LAYERS_H_
#define DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_LAYERS_H_

// transformers' CLIPTextTransformer and its pieces, under transformers'
// attribute names (`embeddings.token_embedding`, `encoder.layers.0.self_attn
// .q_proj`, `final_layer_norm`).

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <optional>
#include <vector>

#include "core/models/layers/embedding.h"
#include "core/models/layers/linear.h"
#include "core/models/text/clip_text_config.h"

namespace ditserve::models {

// Token plus learned absolute position embeddings.
class CLIPTextEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit CLIPTextEmbeddingsImpl(const CLIPTextConfig& config);
  at::Tensor Forward(const at::Tensor& input_ids);

 private:
  Embedding token_embedding_{nullptr};
  Embedding position_embedding_{nullptr};
};
TORCH_MODULE(CLIPTextEmbeddings);

// Multi-head self-attention with 1/sqrt(head_dim) scaling.
class CLIPAttentionImpl : public torch::nn::Module {
 public:
  explicit CLIPAttentionImpl(const CLIPTextConfig& config);
  // `bias` [B or 1, 1, S, S]: causal plus padding, additive.
  at::Tensor Forward(const at::Tensor& hidden_states, const at::Tensor& bias);

 private:
  int64_t heads_;
  int64_t head_dim_;
  Linear q_proj_{nullptr};
  Linear k_proj_{nullptr};
  Linear v_proj_{nullptr};
  Linear out_proj_{nullptr};
};
TORCH_MODULE(CLIPAttention);

// fc2(act(fc1(x))).
class CLIPMLPImpl : public torch::nn::Module {
 public:
  explicit CLIPMLPImpl(const CLIPTextConfig& config);
  at::Tensor Forward(const at::Tensor& x);

 private:
  TextActivation activation_;
  Linear fc1_{nullptr};
  Linear fc2_{nullptr};
};
TORCH_MODULE(CLIPMLP);

// Pre-LayerNorm block: x + attn(ln1(x)), then x + mlp(ln2(x)).
class CLIPEncoderLayerImpl : public torch::nn::Module {
 public:
  explicit CLIPEncoderLayerImpl(const CLIPTextConfig& config);
  at::Tensor Forward(const at::Tensor& hidden_states, const at::Tensor& bias);

 private:
  CLIPAttention self_attn_{nullptr};
  torch::nn::LayerNorm layer_norm1_{nullptr};
  CLIPMLP mlp_{nullptr};
  torch::nn::LayerNorm layer_norm2_{nullptr};
};
TORCH_MODULE(CLIPEncoderLayer);

struct CLIPTextTransformerOutput {
  // [B, S, hidden]: final_layer_norm of the last layer's output.
  at::Tensor last_hidden_state;
  // [B, hidden]: last_hidden_state at the EOS position of each row.
  at::Tensor pooler_output;
  // num_hidden_layers + 1 tensors [B, S, hidden]: the embeddings, then the
  // output of each layer (SD3 takes the penultimate, hidden_states[-2]).
  std::vector<at::Tensor> hidden_states;
};

// CLIPTextTransformer: embeddings, causal encoder, final_layer_norm, EOS
// pooling. Inputs must have been checked (CheckTextEncoderInputs and the
// position limit); LibTorch errors are thrown.
class CLIPTextTransformerImpl : public torch::nn::Module {
 public:
  explicit CLIPTextTransformerImpl(const CLIPTextConfig& config);
  CLIPTextTransformerOutput Forward(
      const at::Tensor& input_ids,
      const std::optional<at::Tensor>& attention_mask);

 private:
  at::Tensor Pool(const at::Tensor& last_hidden_state,
                  const at::Tensor& input_ids) const;

  int64_t eos_token_id_;
  CLIPTextEmbeddings embeddings_{nullptr};
  std::vector<CLIPEncoderLayer> layers_;
  torch::nn::LayerNorm final_layer_norm_{nullptr};
};
TORCH_MODULE(CLIPTextTransformer);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_LAYERS_H_
