#ifndef DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_MODEL_H_
#define DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/layers/linear.h"
#include "core/models/text/clip_text_config.h"
#include "core/models/text/clip_text_layers.h"

namespace ditserve::models {

struct CLIPTextOutput {
  // [B, S, hidden]
  at::Tensor last_hidden_state;
  // [B, hidden]: last_hidden_state at each row's EOS position.
  at::Tensor pooler_output;
  // The embeddings, then each layer's output (num_hidden_layers + 1).
  std::vector<at::Tensor> hidden_states;
  // [B, projection_dim]: text_projection(pooler_output);
  // CLIPTextModelWithProjection only.
  at::Tensor text_embeds;
};

// transformers CLIPTextModel (FLUX's and SD3's CLIP-L). Module paths are the
// checkpoint names (`text_model.encoder.layers.0.self_attn.q_proj.weight`).
class CLIPTextModel : public torch::nn::Module {
 public:
  explicit CLIPTextModel(const CLIPTextConfig& config);

  const CLIPTextConfig& config() const { return config_; }

  // `input_ids` [B, S] (S <= max_position_embeddings); attention is always
  // causal and `attention_mask` [B, S] (1 = token) also masks padded keys.
  // INVALID_ARGUMENT for ill-shaped inputs, INTERNAL for LibTorch errors.
  absl::StatusOr<CLIPTextOutput> Forward(
      const at::Tensor& input_ids,
      const std::optional<at::Tensor>& attention_mask = std::nullopt);

 private:
  CLIPTextConfig config_;
  CLIPTextTransformer text_model_{nullptr};
};

// transformers CLIPTextModelWithProjection (SD3's two CLIP encoders):
// CLIPTextModel plus `text_projection` (no bias) of the pooled output.
class CLIPTextModelWithProjection : public torch::nn::Module {
 public:
  explicit CLIPTextModelWithProjection(const CLIPTextConfig& config);

  const CLIPTextConfig& config() const { return config_; }

  // As CLIPTextModel::Forward, with text_embeds set.
  absl::StatusOr<CLIPTextOutput> Forward(
      const at::Tensor& input_ids,
      const std::optional<at::Tensor>& attention_mask = std::nullopt);

 private:
  CLIPTextConfig config_;
  CLIPTextTransformer text_model_{nullptr};
  Linear text_projection_{nullptr};
};

// Build from a transformers folder (config.json, model.safetensors or its
// sharded index), place, and load every weight strictly (the non-persistent
// `text_model.embeddings.position_ids` older checkpoints carry is accepted).
// Errors name the folder or file.
absl::StatusOr<std::shared_ptr<CLIPTextModel>> LoadCLIPTextModel(
    const std::string& component_dir, const Placement& placement);
absl::StatusOr<std::shared_ptr<CLIPTextModelWithProjection>>
LoadCLIPTextModelWithProjection(const std::string& component_dir,
                                const Placement& placement);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_MODEL_H_
