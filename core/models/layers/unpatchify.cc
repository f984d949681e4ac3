#include "core/models/layers/unpatchify.h"

#include <ATen/ATen.h>

namespace ditserve::models {

at::Tensor Unpatchify(const at::Tensor& tokens, int64_t grid_height,
                      int64_t grid_width, int64_t patch, int64_t channels) {
  return tokens
      .reshape(
          {tokens.size(0), grid_height, grid_width, patch, patch, channels})
      .permute({0, 5, 1, 3, 2, 4})
      .reshape(
          {tokens.size(0), channels, grid_height * patch, grid_width * patch});
}

}  // namespace ditserve::models
