#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_POSITIONS_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_POSITIONS_H_

// Where CogVideoX's video tokens are: the 2b model adds a 3-D sincos table to
// the embedded tokens, the 5b and 1.5 models rotate q and k by a 3-D RoPE.
// Both cover a patch grid of `frames` x `height` x `width` tokens in the
// transformer's token order (t, h, w; w fastest).

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "core/families/cogvideox/cogvideox_transformer_config.h"
#include "core/models/layers/rotary_embedding.h"

namespace ditserve::families {

// The token grid of a latent video [F, C, H, W]: temporal patches, rows and
// columns of patches.
struct VideoTokenGrid {
  int64_t frames = 0;
  int64_t height = 0;
  int64_t width = 0;

  int64_t tokens() const { return frames * height * width; }
};

// The grid of `latent_frames` x `latent_height` x `latent_width` latents;
// INVALID_ARGUMENT naming the rule when the frames (1.5: an even count) or
// the sides (multiples of patch_size) do not divide into patches.
absl::StatusOr<VideoTokenGrid> TokenGridOf(
    const CogVideoXTransformerConfig& config, int64_t latent_frames,
    int64_t latent_height, int64_t latent_width);

// diffusers get_3d_sincos_pos_embed as CogVideoXPatchEmbed uses it: [tokens,
// inner_dim] float32; each row is [t (D/4) | column (3D/8) | row (3D/8)],
// each part [sin | cos] of position * 10000^(-k / (part / 2)), positions
// index / interpolation scale in float32, the rest in float64 as diffusers
// computes it.
at::Tensor SincosVideoPositions(const CogVideoXTransformerConfig& config,
                                const VideoTokenGrid& grid);

// CogVideoXPipeline._prepare_rotary_positional_embeddings: cos and sin
// [tokens, head_dim] float32, each row [t (D/4) | row (3D/8) | column (3D/8)]
// of interleaved pairs. 1.0 stretches the grid over the crop of the trained
// size (Python's half-to-even round picks the crop), 1.5 takes integer
// positions and needs the trained size to cover the grid (INVALID_ARGUMENT
// naming it otherwise).
absl::StatusOr<models::RotaryTables> RotaryVideoPositions(
    const CogVideoXTransformerConfig& config, const VideoTokenGrid& grid);

// The positions of a video's tokens as its model applies them: the RoPE
// tables (5b, 1.5) or the sincos table (2b); the other is left unset.
struct VideoPositions {
  std::optional<models::RotaryTables> rotary;
  at::Tensor sincos;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_POSITIONS_H_
