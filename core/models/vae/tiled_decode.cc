#include "core/models/vae/tiled_decode.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::models {
namespace {

// diffusers' blend_v / blend_h: the first `extent` pixels of `tile` along
// `dim` fade from the last ones of `before` (the tile above or to the left)
// into its own, linearly, in place. The weights are diffusers' Python
// floats, y / extent, rounded to the tile's dtype.
void BlendInto(const at::Tensor& before, at::Tensor& tile, int64_t dim,
               int64_t extent) {
  extent = std::min({before.size(dim), tile.size(dim), extent});
  if (extent <= 0) return;
  std::vector<int64_t> shape(tile.dim(), 1);
  shape[dim] = extent;
  const at::Tensor own = at::arange(extent, tile.options().dtype(at::kDouble)) /
                         static_cast<double>(extent);
  const at::Tensor from_before = (1.0 - own).to(tile.scalar_type()).view(shape);
  at::Tensor head = tile.narrow(dim, 0, extent);
  head.copy_(before.narrow(dim, before.size(dim) - extent, extent) *
                 from_before +
             head * own.to(tile.scalar_type()).view(shape));
}

}  // namespace

absl::StatusOr<DecodeTiles> TilesForSample(int64_t sample_height,
                                           int64_t sample_width,
                                           double overlap_height,
                                           double overlap_width,
                                           int64_t scale_factor) {
  // Python's int() of the same double expressions as diffusers.
  DecodeTiles tiles;
  tiles.latent_height = static_cast<int64_t>(
      static_cast<double>(sample_height) / static_cast<double>(scale_factor));
  tiles.latent_width = static_cast<int64_t>(static_cast<double>(sample_width) /
                                            static_cast<double>(scale_factor));
  tiles.step_height = static_cast<int64_t>(
      static_cast<double>(tiles.latent_height) * (1.0 - overlap_height));
  tiles.step_width = static_cast<int64_t>(
      static_cast<double>(tiles.latent_width) * (1.0 - overlap_width));
  tiles.blend_height =
      static_cast<int64_t>(static_cast<double>(sample_height) * overlap_height);
  tiles.blend_width =
      static_cast<int64_t>(static_cast<double>(sample_width) * overlap_width);
  tiles.kept_height = sample_height - tiles.blend_height;
  tiles.kept_width = sample_width - tiles.blend_width;
  const bool steps_fit =
      tiles.step_height > 0 && tiles.step_width > 0 &&
      tiles.step_height * scale_factor == tiles.kept_height &&
      tiles.step_width * scale_factor == tiles.kept_width;
  if (!steps_fit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tiles of ", sample_height, "x", sample_width,
        " pixels overlapping by ", overlap_height, " and ", overlap_width,
        " step ", tiles.step_height, "x", tiles.step_width, " latent pixels (",
        tiles.step_height * scale_factor, "x", tiles.step_width * scale_factor,
        " pixels) but keep ", tiles.kept_height, "x", tiles.kept_width,
        " pixels of each tile, so the tiled output would not have the "
        "latents' size"));
  }
  return tiles;
}

bool NeedsTiles(const DecodeTiles& tiles, const at::Tensor& z) {
  return z.size(-2) > tiles.latent_height || z.size(-1) > tiles.latent_width;
}

at::Tensor DecodeInTiles(
    const at::Tensor& z, const DecodeTiles& tiles,
    absl::FunctionRef<at::Tensor(const at::Tensor&)> decode) {
  const int64_t height_dim = z.dim() - 2;
  const int64_t width_dim = z.dim() - 1;
  const int64_t height = z.size(height_dim);
  const int64_t width = z.size(width_dim);
  // Filled as the rows are blended, so the output never exists twice; a
  // tile is blended only with finished tiles, so two rows of tiles are all
  // that is kept.
  at::Tensor decoded;
  std::vector<at::Tensor> above;
  int64_t out_top = 0;
  for (int64_t top = 0; top < height; top += tiles.step_height) {
    std::vector<at::Tensor> row;
    int64_t out_left = 0;
    int64_t row_height = 0;
    for (int64_t left = 0; left < width; left += tiles.step_width) {
      at::Tensor tile = decode(
          z.narrow(height_dim, top, std::min(tiles.latent_height, height - top))
              .narrow(width_dim, left,
                      std::min(tiles.latent_width, width - left)));
      if (!above.empty()) {
        BlendInto(above[row.size()], tile, height_dim, tiles.blend_height);
      }
      if (!row.empty()) {
        BlendInto(row.back(), tile, width_dim, tiles.blend_width);
      }
      if (!decoded.defined()) {
        const int64_t scale =
            tile.size(width_dim) / std::min(tiles.latent_width, width);
        std::vector<int64_t> shape = tile.sizes().vec();
        shape[height_dim] = height * scale;
        shape[width_dim] = width * scale;
        decoded = at::empty(shape, tile.options());
      }
      const at::Tensor kept =
          tile.narrow(height_dim, 0,
                      std::min(tiles.kept_height, tile.size(height_dim)))
              .narrow(width_dim, 0,
                      std::min(tiles.kept_width, tile.size(width_dim)));
      decoded.narrow(height_dim, out_top, kept.size(height_dim))
          .narrow(width_dim, out_left, kept.size(width_dim))
          .copy_(kept);
      out_left += kept.size(width_dim);
      row_height = kept.size(height_dim);
      row.push_back(std::move(tile));
    }
    out_top += row_height;
    above = std::move(row);
  }
  return decoded;
}

}  // namespace ditserve::models
