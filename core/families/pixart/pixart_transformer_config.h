#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_CONFIG_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::models {

// The fields of a diffusers PixArtTransformer2DModel config.json that shape
// the model. Only the configuration PixArt-α and PixArt-Σ ship is accepted
// (norm_type "ada_norm_single", activation "gelu-approximate", default
// attention, no affine norms); anything else is an error, not a silently
// different model.
struct PixArtTransformerConfig {
  int64_t num_attention_heads = 0;
  int64_t attention_head_dim = 0;
  int64_t in_channels = 0;
  // null in the file means in_channels.
  int64_t out_channels = 0;
  int64_t num_layers = 0;
  int64_t cross_attention_dim = 0;
  // Width of the T5 states the caption projection takes.
  int64_t caption_channels = 0;
  // Latent side the position table was trained for.
  int64_t sample_size = 0;
  int64_t patch_size = 0;
  // null in the file means max(sample_size / 64, 1), as diffusers decides.
  double interpolation_scale = 1.0;
  // α's resolution and aspect-ratio micro-conditions; null in the file means
  // sample_size == 128, as diffusers decides.
  bool use_additional_conditions = false;
  bool attention_bias = true;
  double norm_eps = 1e-6;

  int64_t inner_dim() const { return num_attention_heads * attention_head_dim; }
  // Channels of the output per image token (proj_out's width): one
  // patch_size x patch_size patch of out_channels latents.
  int64_t token_output_channels() const {
    return patch_size * patch_size * out_channels;
  }
  // The patch grid side the sincos table is scaled to.
  int64_t base_size() const { return sample_size / patch_size; }
};

// Reads and checks the config. `source` names the file in errors.
absl::StatusOr<PixArtTransformerConfig> ParsePixArtTransformerConfig(
    const nlohmann::json& json, const std::string& source);

// The same from a config.json file.
absl::StatusOr<PixArtTransformerConfig> ReadPixArtTransformerConfig(
    const std::string& path);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_CONFIG_H_
