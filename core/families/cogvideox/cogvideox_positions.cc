#include "core/families/cogvideox/cogvideox_positions.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::families {
namespace {

constexpr double kTheta = 10000.0;

// diffusers get_1d_sincos_pos_embed_from_grid: [M, dim] float64 of
// [sin | cos] of positions * 10000^(-k / (dim / 2)).
at::Tensor SincosOf(const at::Tensor& positions, int64_t dim) {
  const at::Tensor omega =
      1.0 / at::pow(kTheta, at::arange(dim / 2, at::kDouble) / (dim / 2.0));
  const at::Tensor angles =
      at::outer(positions.to(at::kDouble).reshape(-1), omega);
  return at::cat({angles.sin(), angles.cos()}, /*dim=*/1);
}

// Python's round(): halves go to the even neighbour (std::nearbyint under
// the default rounding mode); it picks the RoPE crop.
int64_t PythonRound(double value) {
  return static_cast<int64_t>(std::nearbyint(value));
}

struct CropRegion {
  int64_t top = 0;
  int64_t left = 0;
  int64_t bottom = 0;
  int64_t right = 0;
};

// diffusers' get_resize_crop_region_for_grid: the grid resized to fit the
// trained size, centred.
CropRegion ResizeCropRegion(const VideoTokenGrid& grid, int64_t base_height,
                            int64_t base_width) {
  const double height = static_cast<double>(grid.height);
  const double width = static_cast<double>(grid.width);
  int64_t resize_height = base_height;
  int64_t resize_width = base_width;
  if (height / width > static_cast<double>(base_height) / base_width) {
    resize_width = PythonRound(base_height / height * width);
  } else {
    resize_height = PythonRound(base_width / width * height);
  }
  CropRegion crop;
  crop.top = PythonRound((base_height - resize_height) / 2.0);
  crop.left = PythonRound((base_width - resize_width) / 2.0);
  crop.bottom = crop.top + resize_height;
  crop.right = crop.left + resize_width;
  return crop;
}

// torch.linspace(begin, end * (count - 1) / count, count) in float32: the
// 1.0 RoPE's stretched positions.
at::Tensor StretchedPositions(int64_t begin, int64_t end, int64_t count) {
  return at::linspace(static_cast<double>(begin),
                      static_cast<double>(end) * (count - 1) / count, count,
                      at::kFloat);
}

// get_1d_rotary_pos_embed(dim, positions, use_real=True): float32
// frequencies and angles, every cos and sin repeated for its pair.
models::RotaryTables RotaryOf(const at::Tensor& positions, int64_t dim) {
  const at::Tensor frequencies =
      at::reciprocal(at::pow(kTheta, at::arange(0, dim, 2, at::kFloat) /
                                         static_cast<double>(dim))
                         .to(at::kFloat));
  const at::Tensor angles = at::outer(positions, frequencies);
  return {angles.cos().repeat_interleave(2, /*dim=*/1),
          angles.sin().repeat_interleave(2, /*dim=*/1)};
}

enum class Axis { kTime, kRow, kColumn };

// [tokens, d] rows in token order (t, h, w) from a table [axis size, d] of
// one axis.
at::Tensor AlongAxis(const at::Tensor& table, Axis axis,
                     const VideoTokenGrid& grid) {
  std::vector<int64_t> shape = {1, 1, 1, table.size(1)};
  shape[static_cast<int>(axis)] = table.size(0);
  return table.reshape(shape)
      .expand({grid.frames, grid.height, grid.width, table.size(1)})
      .reshape({grid.tokens(), table.size(1)});
}

// Rows [t | h | w] of the RoPE (rows before columns).
at::Tensor RotaryRows(const at::Tensor& t, const at::Tensor& rows,
                      const at::Tensor& columns, const VideoTokenGrid& grid) {
  return at::cat(
      {AlongAxis(t, Axis::kTime, grid), AlongAxis(rows, Axis::kRow, grid),
       AlongAxis(columns, Axis::kColumn, grid)},
      /*dim=*/1);
}

}  // namespace

absl::StatusOr<VideoTokenGrid> TokenGridOf(
    const CogVideoXTransformerConfig& config, int64_t latent_frames,
    int64_t latent_height, int64_t latent_width) {
  const int64_t p = config.patch_size;
  const int64_t pt = config.temporal_patch();
  if (latent_frames < 1 || latent_frames % pt != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the transformer got ", latent_frames,
        " latent frames; it needs a positive multiple of patch_size_t ", pt));
  }
  if (latent_height < p || latent_width < p || latent_height % p != 0 ||
      latent_width % p != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the transformer got a ", latent_height, "x", latent_width,
        " latent; both sides must be positive multiples of patch_size ", p));
  }
  return VideoTokenGrid{.frames = latent_frames / pt,
                        .height = latent_height / p,
                        .width = latent_width / p};
}

at::Tensor SincosVideoPositions(const CogVideoXTransformerConfig& config,
                                const VideoTokenGrid& grid) {
  const int64_t dim = config.inner_dim();
  const int64_t spatial_part = dim / 8 * 3;
  const at::Tensor t =
      at::arange(grid.frames, at::kFloat) / config.temporal_interpolation_scale;
  const at::Tensor rows =
      at::arange(grid.height, at::kFloat) / config.spatial_interpolation_scale;
  const at::Tensor columns =
      at::arange(grid.width, at::kFloat) / config.spatial_interpolation_scale;
  // Unlike the RoPE, the column part comes before the row part.
  return at::cat(
             {AlongAxis(SincosOf(t, dim / 4), Axis::kTime, grid),
              AlongAxis(SincosOf(columns, spatial_part), Axis::kColumn, grid),
              AlongAxis(SincosOf(rows, spatial_part), Axis::kRow, grid)},
             /*dim=*/1)
      .to(at::kFloat);
}

absl::StatusOr<models::RotaryTables> RotaryVideoPositions(
    const CogVideoXTransformerConfig& config, const VideoTokenGrid& grid) {
  const int64_t head_dim = config.attention_head_dim;
  const int64_t base_height = config.rope_grid_height();
  const int64_t base_width = config.rope_grid_width();
  at::Tensor t;
  at::Tensor rows;
  at::Tensor columns;
  if (!config.cuts_rope_grid()) {
    const CropRegion crop = ResizeCropRegion(grid, base_height, base_width);
    t = StretchedPositions(0, grid.frames, grid.frames);
    rows = StretchedPositions(crop.top, crop.bottom, grid.height);
    columns = StretchedPositions(crop.left, crop.right, grid.width);
  } else {
    if (grid.height > base_height || grid.width > base_width) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a ", grid.height, "x", grid.width,
          " patch grid exceeds the trained RoPE grid ", base_height, "x",
          base_width, " (sample_height and sample_width / patch_size)"));
    }
    t = at::arange(grid.frames, at::kFloat);
    rows = at::arange(grid.height, at::kFloat);
    columns = at::arange(grid.width, at::kFloat);
  }
  const models::RotaryTables t_tables = RotaryOf(t, head_dim / 4);
  const models::RotaryTables row_tables = RotaryOf(rows, head_dim / 8 * 3);
  const models::RotaryTables column_tables =
      RotaryOf(columns, head_dim / 8 * 3);
  return models::RotaryTables{
      RotaryRows(t_tables.cos, row_tables.cos, column_tables.cos, grid),
      RotaryRows(t_tables.sin, row_tables.sin, column_tables.sin, grid)};
}

}  // namespace ditserve::families
