#include "core/models/text/t5_encoder_config.h"

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"

namespace ditserve::models {
namespace {

// T5Config defaults.
constexpr int64_t kDefaultNumBuckets = 32;
constexpr int64_t kDefaultMaxDistance = 128;
constexpr double kDefaultLayerNormEpsilon = 1e-6;
constexpr char kDefaultFeedForwardProj[] = "relu";

}  // namespace

absl::StatusOr<T5EncoderConfig> T5EncoderConfig::FromJson(
    const nlohmann::json& json, const std::string& source) {
  const base::JsonFields fields(json, source);
  T5EncoderConfig config;
  for (auto [field, target] :
       {std::pair{"vocab_size", &config.vocab_size},
        std::pair{"d_model", &config.d_model}, std::pair{"d_kv", &config.d_kv},
        std::pair{"d_ff", &config.d_ff},
        std::pair{"num_layers", &config.num_layers},
        std::pair{"num_heads", &config.num_heads}}) {
    ASSIGN_OR_RETURN(int64_t value, fields.PositiveInt(field));
    *target = value;
  }
  ASSIGN_OR_RETURN(
      std::optional<int64_t> buckets,
      fields.OptionalPositiveInt("relative_attention_num_buckets"));
  config.relative_attention_num_buckets = buckets.value_or(kDefaultNumBuckets);
  ASSIGN_OR_RETURN(
      std::optional<int64_t> distance,
      fields.OptionalPositiveInt("relative_attention_max_distance"));
  config.relative_attention_max_distance =
      distance.value_or(kDefaultMaxDistance);
  // The bidirectional buckets split in halves, and the exact range is half of
  // that: fewer than 4 buckets leaves no room for the logarithmic range.
  if (config.relative_attention_num_buckets < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": relative_attention_num_buckets ",
                     config.relative_attention_num_buckets, " is below 4"));
  }
  ASSIGN_OR_RETURN(std::optional<double> epsilon,
                   fields.OptionalNumber("layer_norm_epsilon"));
  config.layer_norm_epsilon = epsilon.value_or(kDefaultLayerNormEpsilon);

  // T5Config: act_info = feed_forward_proj.split("-"), gated when the first
  // part is "gated", "gated-gelu" means gelu_new.
  std::string feed_forward_proj = kDefaultFeedForwardProj;
  if (json.contains("feed_forward_proj")) {
    ASSIGN_OR_RETURN(std::string value, fields.String("feed_forward_proj"));
    feed_forward_proj = value;
  }
  const std::vector<std::string> parts = absl::StrSplit(feed_forward_proj, '-');
  if (parts.size() > 2 || (parts.size() == 2 && parts[0] != "gated")) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": feed_forward_proj \"", feed_forward_proj,
                     "\" is not \"<act>\" or \"gated-<act>\""));
  }
  config.is_gated_act = parts.size() == 2;
  std::string act_name =
      feed_forward_proj == "gated-gelu" ? "gelu_new" : parts.back();
  // Values saved in config.json override the derived ones, as they do when
  // PretrainedConfig sets its remaining kwargs.
  if (json.contains("dense_act_fn")) {
    ASSIGN_OR_RETURN(act_name, fields.String("dense_act_fn"));
  }
  ASSIGN_OR_RETURN(std::optional<bool> gated,
                   fields.OptionalBool("is_gated_act"));
  config.is_gated_act = gated.value_or(config.is_gated_act);
  ASSIGN_OR_RETURN(config.dense_act_fn, ParseTextActivation(act_name, source));
  return config;
}

}  // namespace ditserve::models
