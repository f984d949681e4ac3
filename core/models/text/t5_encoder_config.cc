#include "core/models/text/t5_encoder_config.h"

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/models/json_fields.h"

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
  const JsonFields fields(json, source);
  T5EncoderConfig config;
  for (auto [field, target] :
       {std::pair{"vocab_size", &config.vocab_size},
        std::pair{"d_model", &config.d_model}, std::pair{"d_kv", &config.d_kv},
        std::pair{"d_ff", &config.d_ff},
        std::pair{"num_layers", &config.num_layers},
        std::pair{"num_heads", &config.num_heads}}) {
    absl::StatusOr<int64_t> value = fields.PositiveInt(field);
    if (!value.ok()) return value.status();
    *target = *value;
  }
  absl::StatusOr<std::optional<int64_t>> buckets =
      fields.OptionalPositiveInt("relative_attention_num_buckets");
  if (!buckets.ok()) return buckets.status();
  config.relative_attention_num_buckets = buckets->value_or(kDefaultNumBuckets);
  absl::StatusOr<std::optional<int64_t>> distance =
      fields.OptionalPositiveInt("relative_attention_max_distance");
  if (!distance.ok()) return distance.status();
  config.relative_attention_max_distance =
      distance->value_or(kDefaultMaxDistance);
  // The bidirectional buckets split in halves, and the exact range is half of
  // that: fewer than 4 buckets leaves no room for the logarithmic range.
  if (config.relative_attention_num_buckets < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": relative_attention_num_buckets ",
                     config.relative_attention_num_buckets, " is below 4"));
  }
  absl::StatusOr<std::optional<double>> epsilon =
      fields.OptionalNumber("layer_norm_epsilon");
  if (!epsilon.ok()) return epsilon.status();
  config.layer_norm_epsilon = epsilon->value_or(kDefaultLayerNormEpsilon);

  // T5Config: act_info = feed_forward_proj.split("-"), gated when the first
  // part is "gated", "gated-gelu" means gelu_new.
  std::string feed_forward_proj = kDefaultFeedForwardProj;
  if (json.contains("feed_forward_proj")) {
    absl::StatusOr<std::string> value = fields.String("feed_forward_proj");
    if (!value.ok()) return value.status();
    feed_forward_proj = *value;
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
    absl::StatusOr<std::string> value = fields.String("dense_act_fn");
    if (!value.ok()) return value.status();
    act_name = *value;
  }
  absl::StatusOr<std::optional<bool>> gated =
      fields.OptionalBool("is_gated_act");
  if (!gated.ok()) return gated.status();
  config.is_gated_act = gated->value_or(config.is_gated_act);
  absl::StatusOr<TextActivation> activation =
      ParseTextActivation(act_name, source);
  if (!activation.ok()) return activation.status();
  config.dense_act_fn = *activation;
  return config;
}

}  // namespace ditserve::models
