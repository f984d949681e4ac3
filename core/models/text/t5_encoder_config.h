#ifndef DITSERVE_CORE_MODELS_TEXT_T5_ENCODER_CONFIG_H_
#define DITSERVE_CORE_MODELS_TEXT_T5_ENCODER_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/models/text/text_activation.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {

// The fields of transformers' T5Config that the encoder uses.
struct T5EncoderConfig {
  int64_t vocab_size = 0;
  int64_t d_model = 0;
  int64_t d_kv = 0;
  int64_t d_ff = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t relative_attention_num_buckets = 0;
  int64_t relative_attention_max_distance = 0;
  double layer_norm_epsilon = 0.0;
  // From feed_forward_proj ("gated-gelu" = gated, gelu_new; "relu" = plain
  // relu), unless config.json states dense_act_fn / is_gated_act itself.
  TextActivation dense_act_fn = TextActivation::kRelu;
  bool is_gated_act = false;

  // Absent optional fields take T5Config's defaults. INVALID_ARGUMENT naming
  // `source`, the field and the value otherwise.
  static absl::StatusOr<T5EncoderConfig> FromJson(const nlohmann::json& json,
                                                  const std::string& source);
};

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_T5_ENCODER_CONFIG_H_
