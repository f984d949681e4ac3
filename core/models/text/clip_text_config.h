#ifndef DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_CONFIG_H_
#define DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/models/text/text_activation.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {

// The fields of transformers' CLIPTextConfig the text encoders use.
struct CLIPTextConfig {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t max_position_embeddings = 0;
  int64_t projection_dim = 0;
  double layer_norm_eps = 0.0;
  TextActivation hidden_act = TextActivation::kQuickGelu;
  // 2 (the real CLIP-L / bigG configs) selects the legacy pooling at
  // argmax(input_ids); any other id pooling at its first occurrence.
  int64_t eos_token_id = 0;

  // Absent optional fields take CLIPTextConfig's defaults. INVALID_ARGUMENT
  // naming `source`, the field and the value otherwise (heads must divide
  // hidden_size).
  static absl::StatusOr<CLIPTextConfig> FromJson(const nlohmann::json& json,
                                                 const std::string& source);
};

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_CLIP_TEXT_CONFIG_H_
