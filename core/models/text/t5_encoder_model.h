#ifndef DITSERVE_CORE_MODELS_TEXT_T5_ENCODER_MODEL_H_
#define DITSERVE_CORE_MODELS_TEXT_T5_ENCODER_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/layers/embedding.h"
#include "core/models/text/t5_encoder_config.h"
#include "core/models/text/t5_layers.h"

namespace ditserve::models {

// transformers T5EncoderModel (T5 v1.1 / the FLUX, SD3 and PixArt text
// encoder). Module paths are the checkpoint names: `shared.weight`,
// `encoder.block.0.layer.0.SelfAttention.q.weight`,
// `encoder.final_layer_norm.weight`; `encoder.embed_tokens` is tied to
// `shared` and therefore not a separate parameter.
class T5EncoderModel : public torch::nn::Module {
 public:
  explicit T5EncoderModel(const T5EncoderConfig& config);

  const T5EncoderConfig& config() const { return config_; }

  // last_hidden_state [B, S, d_model] for `input_ids` [B, S] (int64). With
  // `attention_mask` [B, S] (1 = token, 0 = padding) padded keys are masked
  // by an additive finfo.min bias; padded query rows are still computed.
  // INVALID_ARGUMENT for ill-shaped inputs or ids outside the vocabulary,
  // INTERNAL for LibTorch errors.
  absl::StatusOr<at::Tensor> Forward(
      const at::Tensor& input_ids,
      const std::optional<at::Tensor>& attention_mask = std::nullopt);

 private:
  at::Tensor ForwardUnchecked(const at::Tensor& input_ids,
                              const std::optional<at::Tensor>& attention_mask);

  T5EncoderConfig config_;
  Embedding shared_{nullptr};
  std::vector<T5Block> blocks_;
  T5LayerNorm final_layer_norm_{nullptr};
};

// Builds a T5EncoderModel from a transformers folder (config.json,
// model.safetensors or its sharded index), places it and loads every weight
// strictly (a stored copy of the tied encoder.embed_tokens.weight is
// accepted). Errors name the folder or file.
absl::StatusOr<std::shared_ptr<T5EncoderModel>> LoadT5EncoderModel(
    const std::string& component_dir, const Placement& placement);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_T5_ENCODER_MODEL_H_
