#ifndef DITSERVE_CORE_MODELS_LAYERS_SINCOS_POSITION_TABLE_H_
#define DITSERVE_CORE_MODELS_LAYERS_SINCOS_POSITION_TABLE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace ditserve::models {

// diffusers get_2d_sincos_pos_embed for a grid_height x grid_width patch
// grid: [grid_height * grid_width, embed_dim] float32, one row per patch in
// row-major order. Grid coordinates are i / (grid / base_size) /
// interpolation_scale in float32 (so a grid larger than base_size is
// stretched onto the trained range); the first half of the channels encodes
// the column, the second half the row, each as [sin, cos] of the coordinate
// times 10000^(-k / (embed_dim / 4)), evaluated in float64 as diffusers does.
// embed_dim must be a multiple of 4.
at::Tensor SincosPositionTable2d(int64_t embed_dim, int64_t grid_height,
                                 int64_t grid_width, double base_size,
                                 double interpolation_scale);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_SINCOS_POSITION_TABLE_H_
