#include "core/models/layers/sincos_position_table.h"

#include <torch/torch.h>

namespace ditserve::models {
namespace {

constexpr double kMaxPeriod = 10000.0;

// get_1d_sincos_pos_embed_from_grid: positions [N] -> [N, dim] float64.
at::Tensor Sincos1d(int64_t dim, const at::Tensor& positions) {
  at::Tensor omega =
      at::arange(dim / 2, positions.options().dtype(at::kDouble));
  omega = omega / (static_cast<double>(dim) / 2.0);
  omega = 1.0 / at::pow(kMaxPeriod, omega);
  const at::Tensor angles =
      at::outer(positions.reshape(-1).to(at::kDouble), omega);
  return at::cat({at::sin(angles), at::cos(angles)}, /*dim=*/1);
}

// Patch coordinates along one axis, float32 like diffusers.
at::Tensor AxisCoordinates(int64_t size, double base_size,
                           double interpolation_scale) {
  return at::arange(size, at::TensorOptions().dtype(at::kFloat)) /
         (static_cast<double>(size) / base_size) / interpolation_scale;
}

}  // namespace

at::Tensor SincosPositionTable2d(int64_t embed_dim, int64_t grid_height,
                                 int64_t grid_width, double base_size,
                                 double interpolation_scale) {
  const at::Tensor rows =
      AxisCoordinates(grid_height, base_size, interpolation_scale);
  const at::Tensor columns =
      AxisCoordinates(grid_width, base_size, interpolation_scale);
  // [grid_height, grid_width] each: the column and the row of every patch.
  const at::Tensor column_of_patch =
      columns.unsqueeze(0).expand({grid_height, grid_width});
  const at::Tensor row_of_patch =
      rows.unsqueeze(1).expand({grid_height, grid_width});
  return at::cat({Sincos1d(embed_dim / 2, column_of_patch),
                  Sincos1d(embed_dim / 2, row_of_patch)},
                 /*dim=*/1)
      .to(at::kFloat);
}

}  // namespace ditserve::models
