#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_TRANSFORMER_CONFIG_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_TRANSFORMER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::models {

// The fields of a diffusers SD3Transformer2DModel config.json (SD3-medium and
// SD3.5).
struct SD3TransformerConfig {
  int64_t sample_size = 0;
  int64_t patch_size = 0;
  int64_t in_channels = 0;
  // null in the file means in_channels.
  int64_t out_channels = 0;
  int64_t num_layers = 0;
  int64_t attention_head_dim = 0;
  int64_t num_attention_heads = 0;
  int64_t joint_attention_dim = 0;
  int64_t caption_projection_dim = 0;
  int64_t pooled_projection_dim = 0;
  // Side of the stored square position table the patch grid is cropped from.
  int64_t pos_embed_max_size = 0;
  // SD3.5: per-head RMSNorm on q and k ("rms_norm" in the file; null = none).
  bool qk_norm = false;
  // SD3.5: blocks with a second, image-only attention (attn2).
  std::vector<int64_t> dual_attention_layers;

  int64_t inner_dim() const { return num_attention_heads * attention_head_dim; }
  // Channels of the output per image token (proj_out's width): one
  // patch_size x patch_size patch of out_channels latents.
  int64_t token_output_channels() const {
    return patch_size * patch_size * out_channels;
  }
  bool uses_dual_attention(int64_t block) const;
};

// Reads and checks the config (positive sizes, caption_projection_dim equal
// to the inner dim, dual_attention_layers inside [0, num_layers)). `source`
// names the file in errors.
absl::StatusOr<SD3TransformerConfig> ParseSD3TransformerConfig(
    const nlohmann::json& json, const std::string& source);

// The same from a config.json file.
absl::StatusOr<SD3TransformerConfig> ReadSD3TransformerConfig(
    const std::string& path);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_TRANSFORMER_CONFIG_H_
