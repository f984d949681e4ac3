#include "core/models/text/clip_text_config.h"

#include <optional>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"

namespace ditserve::models {
namespace {

// CLIPTextConfig defaults.
constexpr int64_t kDefaultProjectionDim = 512;
constexpr int64_t kDefaultMaxPositions = 77;
constexpr int64_t kDefaultEosTokenId = 2;
constexpr double kDefaultLayerNormEps = 1e-5;
constexpr char kDefaultHiddenAct[] = "quick_gelu";

}  // namespace

absl::StatusOr<CLIPTextConfig> CLIPTextConfig::FromJson(
    const nlohmann::json& json, const std::string& source) {
  const base::JsonFields fields(json, source);
  CLIPTextConfig config;
  for (auto [field, target] :
       {std::pair{"vocab_size", &config.vocab_size},
        std::pair{"hidden_size", &config.hidden_size},
        std::pair{"intermediate_size", &config.intermediate_size},
        std::pair{"num_hidden_layers", &config.num_hidden_layers},
        std::pair{"num_attention_heads", &config.num_attention_heads}}) {
    ASSIGN_OR_RETURN(int64_t value, fields.PositiveInt(field));
    *target = value;
  }
  for (auto [field, target, fallback] :
       {std::tuple{"max_position_embeddings", &config.max_position_embeddings,
                   kDefaultMaxPositions},
        std::tuple{"projection_dim", &config.projection_dim,
                   kDefaultProjectionDim}}) {
    ASSIGN_OR_RETURN(std::optional<int64_t> value,
                     fields.OptionalPositiveInt(field));
    *target = value.value_or(fallback);
  }
  // eos_token_id may be 0 in principle, so it is not a PositiveInt.
  config.eos_token_id = kDefaultEosTokenId;
  if (auto eos = json.find("eos_token_id"); eos != json.end()) {
    if (!eos->is_number_integer() || eos->get<int64_t>() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": field \"eos_token_id\" is ", eos->dump(),
                       "; expected a non-negative integer"));
    }
    config.eos_token_id = eos->get<int64_t>();
  }
  ASSIGN_OR_RETURN(std::optional<double> eps,
                   fields.OptionalNumber("layer_norm_eps"));
  config.layer_norm_eps = eps.value_or(kDefaultLayerNormEps);
  std::string act_name = kDefaultHiddenAct;
  if (json.contains("hidden_act")) {
    ASSIGN_OR_RETURN(act_name, fields.String("hidden_act"));
  }
  ASSIGN_OR_RETURN(config.hidden_act, ParseTextActivation(act_name, source));
  if (config.hidden_size % config.num_attention_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": hidden_size ", config.hidden_size,
                     " is not a multiple of num_attention_heads ",
                     config.num_attention_heads));
  }
  return config;
}

}  // namespace ditserve::models
