#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_TRANSFORMER_CONFIG_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_TRANSFORMER_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::families {

// The fields of a diffusers CogVideoXTransformer3DModel config.json that the
// text-to-video models (CogVideoX-2b, -5b, 1.5-5B) use.
struct CogVideoXTransformerConfig {
  int64_t num_attention_heads = 0;
  int64_t attention_head_dim = 0;
  int64_t in_channels = 0;
  // null in the file means in_channels.
  int64_t out_channels = 0;
  int64_t num_layers = 0;
  int64_t time_embed_dim = 0;
  int64_t text_embed_dim = 0;
  // The T5 length the model was trained with; the 2b sincos table has zero
  // rows for exactly this many text tokens.
  int64_t max_text_seq_length = 0;
  int64_t patch_size = 0;
  // 1.5: latent frames per temporal patch (a Linear patch embedding over
  // patch_size_t x patch_size x patch_size); unset for 1.0 (a Conv2d on
  // every frame).
  std::optional<int64_t> patch_size_t;
  // Bias of the 1.0 Conv2d patch embedding (1.5's Linear always has one).
  bool patch_bias = true;
  // The latent size the model was trained at: the RoPE grid's base size.
  int64_t sample_height = 0;
  int64_t sample_width = 0;
  int64_t sample_frames = 0;
  int64_t temporal_compression_ratio = 0;
  // diffusers' defaults, for a config.json without them.
  double spatial_interpolation_scale = 1.875;
  double temporal_interpolation_scale = 1.0;
  // 5b and 1.5: 3-D RoPE on the video tokens; 2b: a 3-D sincos table.
  bool use_rotary_positional_embeddings = false;
  bool flip_sin_to_cos = true;
  double freq_shift = 0.0;
  bool attention_bias = true;
  double norm_eps = 1e-5;

  int64_t inner_dim() const { return num_attention_heads * attention_head_dim; }
  // Latent frames in one temporal patch (1 for 1.0).
  int64_t temporal_patch() const { return patch_size_t.value_or(1); }
  // The RoPE grid's base size in patches: 1.0 stretches it over any patch
  // grid, 1.5 (the release with a temporal patch) cuts smaller grids from
  // it, so that its size bounds 1.5's sides.
  int64_t rope_grid_height() const { return sample_height / patch_size; }
  int64_t rope_grid_width() const { return sample_width / patch_size; }
  bool cuts_rope_grid() const { return patch_size_t.has_value(); }
  // Output channels per video token (proj_out's width).
  int64_t token_output_channels() const {
    return temporal_patch() * patch_size * patch_size * out_channels;
  }
};

// Reads and checks the config: positive sizes, head_dim and inner_dim
// divisible as the position tables need, and INVALID_ARGUMENT naming the key
// and the supported values for what only the image-to-video models use
// (learned positional embeddings, ofs embedding) or what diffusers does not
// build (other activations). `source` names the file in errors.
absl::StatusOr<CogVideoXTransformerConfig> ParseCogVideoXTransformerConfig(
    const nlohmann::json& json, const std::string& source);

// The same from a config.json file.
absl::StatusOr<CogVideoXTransformerConfig> ReadCogVideoXTransformerConfig(
    const std::string& path);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_TRANSFORMER_CONFIG_H_
