#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_CONFIG_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::models {

// The fields of a diffusers FluxTransformer2DModel config.json.
struct FluxTransformerConfig {
  int64_t patch_size = 0;
  int64_t in_channels = 0;
  // config "out_channels"; null in the file means in_channels.
  int64_t out_channels = 0;
  // Double-stream blocks (transformer_blocks).
  int64_t num_layers = 0;
  // Single-stream blocks (single_transformer_blocks).
  int64_t num_single_layers = 0;
  int64_t attention_head_dim = 0;
  int64_t num_attention_heads = 0;
  int64_t joint_attention_dim = 0;
  int64_t pooled_projection_dim = 0;
  bool guidance_embeds = false;
  std::vector<int64_t> axes_dims_rope;

  int64_t inner_dim() const { return num_attention_heads * attention_head_dim; }
  int64_t total_blocks() const { return num_layers + num_single_layers; }
  // Channels of an output token: one patch_size × patch_size latent patch.
  int64_t output_channels() const {
    return patch_size * patch_size * out_channels;
  }
};

// Reads and checks the config (positive sizes, axes_dims_rope even and
// summing to attention_head_dim). `source` names the file in errors.
absl::StatusOr<FluxTransformerConfig> ParseFluxTransformerConfig(
    const nlohmann::json& json, const std::string& source);

// The same from a config.json file.
absl::StatusOr<FluxTransformerConfig> ReadFluxTransformerConfig(
    const std::string& path);

// The config as config.json holds it (what make_checkpoint writes).
nlohmann::json ToJson(const FluxTransformerConfig& config);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_CONFIG_H_
