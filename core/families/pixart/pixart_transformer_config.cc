#include "core/families/pixart/pixart_transformer_config.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

// A string field that, when present, must have the one value implemented.
absl::Status CheckFixedString(const nlohmann::json& json,
                              const std::string& source,
                              const std::string& field,
                              const std::string& supported) {
  auto it = json.find(field);
  if (it == json.end() || it->is_null()) return absl::OkStatus();
  if (it->is_string() && it->get<std::string>() == supported) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", field, " is ", it->dump(), "; only \"",
                   supported, "\" is implemented"));
}

absl::Status CheckSupportedVariant(const nlohmann::json& json,
                                   const std::string& source) {
  for (const auto& [field, supported] :
       {std::pair<std::string, std::string>{"norm_type", "ada_norm_single"},
        {"activation_fn", "gelu-approximate"},
        {"attention_type", "default"}}) {
    RETURN_IF_ERROR(CheckFixedString(json, source, field, supported));
  }
  const base::JsonFields fields(json, source);
  for (const char* field :
       {"norm_elementwise_affine", "only_cross_attention"}) {
    ASSIGN_OR_RETURN(std::optional<bool> value, fields.OptionalBool(field));
    if (value.value_or(false)) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": ", field, " is true; only false is implemented"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShapes(const PixArtTransformerConfig& config,
                         const std::string& source) {
  if (config.cross_attention_dim != config.inner_dim()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": cross_attention_dim ", config.cross_attention_dim,
        " must equal num_attention_heads * attention_head_dim ",
        config.inner_dim(), " (the caption projection's width)"));
  }
  if (config.use_additional_conditions && config.inner_dim() % 3 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": inner dim ", config.inner_dim(),
        " must be divisible by 3 with use_additional_conditions (timestep, "
        "resolution and aspect-ratio embeddings share it)"));
  }
  if (config.inner_dim() % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": inner dim ", config.inner_dim(),
        " must be a multiple of 4 (the 2-D sincos position table gives each "
        "axis half of it as sin and cos pairs)"));
  }
  if (config.sample_size % config.patch_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": sample_size ", config.sample_size,
                     " is not a multiple of patch_size ", config.patch_size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PixArtTransformerConfig> ParsePixArtTransformerConfig(
    const nlohmann::json& json, const std::string& source) {
  RETURN_IF_ERROR(CheckSupportedVariant(json, source));
  const base::JsonFields fields(json, source);
  PixArtTransformerConfig config;
  RETURN_IF_ERROR(fields.PositiveInts({
      {"num_attention_heads", &config.num_attention_heads},
      {"attention_head_dim", &config.attention_head_dim},
      {"in_channels", &config.in_channels},
      {"num_layers", &config.num_layers},
      {"cross_attention_dim", &config.cross_attention_dim},
      {"caption_channels", &config.caption_channels},
      {"sample_size", &config.sample_size},
      {"patch_size", &config.patch_size},
  }));
  ASSIGN_OR_RETURN(std::optional<int64_t> out_channels,
                   fields.OptionalPositiveInt("out_channels"));
  config.out_channels = out_channels.value_or(config.in_channels);

  ASSIGN_OR_RETURN(std::optional<double> interpolation_scale,
                   fields.OptionalNumber("interpolation_scale"));
  config.interpolation_scale = interpolation_scale.value_or(
      static_cast<double>(std::max<int64_t>(config.sample_size / 64, 1)));
  if (config.interpolation_scale <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": interpolation_scale ",
                     config.interpolation_scale, " must be positive"));
  }
  ASSIGN_OR_RETURN(std::optional<bool> additional,
                   fields.OptionalBool("use_additional_conditions"));
  config.use_additional_conditions =
      additional.value_or(config.sample_size == 128);
  ASSIGN_OR_RETURN(std::optional<bool> attention_bias,
                   fields.OptionalBool("attention_bias"));
  config.attention_bias = attention_bias.value_or(true);
  ASSIGN_OR_RETURN(std::optional<double> norm_eps,
                   fields.OptionalNumber("norm_eps"));
  config.norm_eps = norm_eps.value_or(1e-6);

  RETURN_IF_ERROR(CheckShapes(config, source));
  return config;
}

absl::StatusOr<PixArtTransformerConfig> ReadPixArtTransformerConfig(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return ParsePixArtTransformerConfig(json, path);
}

}  // namespace ditserve::models
