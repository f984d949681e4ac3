#include "core/families/flux/flux_transformer_config.h"

#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

absl::Status CheckRopeAxes(const FluxTransformerConfig& config,
                           const std::string& source) {
  const int64_t sum = std::accumulate(config.axes_dims_rope.begin(),
                                      config.axes_dims_rope.end(), int64_t{0});
  bool all_even = true;
  for (int64_t dim : config.axes_dims_rope) all_even &= dim % 2 == 0;
  if (sum != config.attention_head_dim || !all_even) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": axes_dims_rope [",
                     absl::StrJoin(config.axes_dims_rope, ", "),
                     "] must be even and sum to attention_head_dim ",
                     config.attention_head_dim));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FluxTransformerConfig> ParseFluxTransformerConfig(
    const nlohmann::json& json, const std::string& source) {
  const base::JsonFields fields(json, source);
  FluxTransformerConfig config;
  RETURN_IF_ERROR(fields.PositiveInts({
      {"patch_size", &config.patch_size},
      {"in_channels", &config.in_channels},
      {"num_layers", &config.num_layers},
      {"num_single_layers", &config.num_single_layers},
      {"attention_head_dim", &config.attention_head_dim},
      {"num_attention_heads", &config.num_attention_heads},
      {"joint_attention_dim", &config.joint_attention_dim},
      {"pooled_projection_dim", &config.pooled_projection_dim},
  }));
  ASSIGN_OR_RETURN(std::optional<int64_t> out_channels,
                   fields.OptionalPositiveInt("out_channels"));
  config.out_channels = out_channels.value_or(config.in_channels);
  ASSIGN_OR_RETURN(config.guidance_embeds, fields.Bool("guidance_embeds"));
  ASSIGN_OR_RETURN(config.axes_dims_rope,
                   fields.PositiveIntList("axes_dims_rope"));
  RETURN_IF_ERROR(CheckRopeAxes(config, source));
  return config;
}

absl::StatusOr<FluxTransformerConfig> ReadFluxTransformerConfig(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return ParseFluxTransformerConfig(json, path);
}

nlohmann::json ToJson(const FluxTransformerConfig& config) {
  return {
      {"_class_name", "FluxTransformer2DModel"},
      {"patch_size", config.patch_size},
      {"in_channels", config.in_channels},
      {"out_channels", config.out_channels},
      {"num_layers", config.num_layers},
      {"num_single_layers", config.num_single_layers},
      {"attention_head_dim", config.attention_head_dim},
      {"num_attention_heads", config.num_attention_heads},
      {"joint_attention_dim", config.joint_attention_dim},
      {"pooled_projection_dim", config.pooled_projection_dim},
      {"guidance_embeds", config.guidance_embeds},
      {"axes_dims_rope", config.axes_dims_rope},
  };
}

}  // namespace ditserve::models
