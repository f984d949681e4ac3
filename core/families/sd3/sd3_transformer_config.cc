#include "core/families/sd3/sd3_transformer_config.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

absl::Status ParseQkNorm(const nlohmann::json& json, const std::string& source,
                         SD3TransformerConfig& config) {
  auto it = json.find("qk_norm");
  if (it == json.end() || it->is_null()) return absl::OkStatus();
  if (it->is_string() && it->get<std::string>() == "rms_norm") {
    config.qk_norm = true;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": qk_norm is ", it->dump(), "; expected null or \"rms_norm\""));
}

absl::Status ParseDualAttentionLayers(const nlohmann::json& json,
                                      const std::string& source,
                                      SD3TransformerConfig& config) {
  auto it = json.find("dual_attention_layers");
  if (it == json.end() || it->is_null()) return absl::OkStatus();
  const absl::Status wrong = absl::InvalidArgumentError(absl::StrCat(
      source, ": dual_attention_layers is ", it->dump(),
      "; expected a list of block indices in [0, ", config.num_layers, ")"));
  if (!it->is_array()) return wrong;
  for (const nlohmann::json& item : *it) {
    if (!item.is_number_integer()) return wrong;
    const int64_t block = item.get<int64_t>();
    if (block < 0 || block >= config.num_layers) return wrong;
    config.dual_attention_layers.push_back(block);
  }
  return absl::OkStatus();
}

}  // namespace

bool SD3TransformerConfig::uses_dual_attention(int64_t block) const {
  return std::find(dual_attention_layers.begin(), dual_attention_layers.end(),
                   block) != dual_attention_layers.end();
}

absl::StatusOr<SD3TransformerConfig> ParseSD3TransformerConfig(
    const nlohmann::json& json, const std::string& source) {
  const base::JsonFields fields(json, source);
  SD3TransformerConfig config;
  RETURN_IF_ERROR(fields.PositiveInts({
      {"sample_size", &config.sample_size},
      {"patch_size", &config.patch_size},
      {"in_channels", &config.in_channels},
      {"num_layers", &config.num_layers},
      {"attention_head_dim", &config.attention_head_dim},
      {"num_attention_heads", &config.num_attention_heads},
      {"joint_attention_dim", &config.joint_attention_dim},
      {"caption_projection_dim", &config.caption_projection_dim},
      {"pooled_projection_dim", &config.pooled_projection_dim},
      {"pos_embed_max_size", &config.pos_embed_max_size},
  }));
  ASSIGN_OR_RETURN(std::optional<int64_t> out_channels,
                   fields.OptionalPositiveInt("out_channels"));
  config.out_channels = out_channels.value_or(config.in_channels);
  RETURN_IF_ERROR(ParseQkNorm(json, source, config));
  RETURN_IF_ERROR(ParseDualAttentionLayers(json, source, config));
  if (config.caption_projection_dim != config.inner_dim()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": caption_projection_dim ", config.caption_projection_dim,
        " must equal num_attention_heads * attention_head_dim ",
        config.inner_dim(), " (text and image streams attend jointly)"));
  }
  return config;
}

absl::StatusOr<SD3TransformerConfig> ReadSD3TransformerConfig(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return ParseSD3TransformerConfig(json, path);
}

}  // namespace ditserve::models
