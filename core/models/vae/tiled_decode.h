#ifndef DITSERVE_CORE_MODELS_VAE_TILED_DECODE_H_
#define DITSERVE_CORE_MODELS_VAE_TILED_DECODE_H_

// diffusers' tiled VAE decode (enable_tiling; AutoencoderKL.tiled_decode and
// AutoencoderKLCogVideoX.tiled_decode): the latent's last two dimensions
// (height, width) are cut into overlapping tiles, each decoded on its own,
// and each decoded tile is blended linearly into the tile above and the
// tile to its left over their overlap. Only one tile's decoder activations
// are alive at a time, so the decode's peak follows the tile's size instead
// of the image's; the output differs from a whole decode near the seams.

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace ditserve::models {

// The tile geometry, in diffusers' terms.
struct DecodeTiles {
  // tile_latent_min_*: latent pixels per tile.
  int64_t latent_height = 0;
  int64_t latent_width = 0;
  // overlap_*: latent pixels from one tile's start to the next one's.
  int64_t step_height = 0;
  int64_t step_width = 0;
  // blend_extent_*: decoded pixels over which a tile fades in from the tile
  // above (height) and the tile to its left (width).
  int64_t blend_height = 0;
  int64_t blend_width = 0;
  // row_limit_*: decoded pixels each tile contributes, from its top left.
  int64_t kept_height = 0;
  int64_t kept_width = 0;
};

// diffusers' geometry for tiles of sample_height × sample_width decoded
// pixels (tile_sample_min_*) that overlap by the given fractions
// (tile_overlap_factor_*), for a VAE of `scale_factor` pixels per latent
// pixel. INVALID_ARGUMENT when the geometry does not tile: a step of no
// latent pixels, or steps whose pixels differ from those each tile keeps
// (diffusers' output would then not have the latent's size).
absl::StatusOr<DecodeTiles> TilesForSample(int64_t sample_height,
                                           int64_t sample_width,
                                           double overlap_height,
                                           double overlap_width,
                                           int64_t scale_factor);

// Whether diffusers decodes `z` [..., h, w] in tiles: when it is larger
// than one tile along either side.
bool NeedsTiles(const DecodeTiles& tiles, const at::Tensor& z);

// The tiled decode of `z` [..., h, w]: `decode` maps each tile's latents
// [..., th, tw] to its pixels [..., th * s, tw * s]. The result is
// [..., h * s, w * s] in the tiles' dtype.
at::Tensor DecodeInTiles(
    const at::Tensor& z, const DecodeTiles& tiles,
    absl::FunctionRef<at::Tensor(const at::Tensor&)> decode);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_VAE_TILED_DECODE_H_
