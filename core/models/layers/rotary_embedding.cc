#include "core/models/layers/rotary_embedding.h"

#include <torch/torch.h>

namespace ditserve::models {

RotaryTables FluxRotaryTables(const at::Tensor& ids,
                              const std::vector<int64_t>& axes_dims,
                              double theta) {
  const at::Tensor positions = ids.to(at::kDouble);
  std::vector<at::Tensor> cos_parts;
  std::vector<at::Tensor> sin_parts;
  for (size_t axis = 0; axis < axes_dims.size(); ++axis) {
    const int64_t dim = axes_dims[axis];
    const at::Tensor exponents =
        at::arange(0, dim, 2, positions.options()).slice(0, 0, dim / 2) /
        static_cast<double>(dim);
    const at::Tensor frequencies = 1.0 / at::pow(theta, exponents);
    const at::Tensor angles =
        at::outer(positions.select(1, static_cast<int64_t>(axis)), frequencies);
    cos_parts.push_back(
        angles.cos().repeat_interleave(2, /*dim=*/1).to(at::kFloat));
    sin_parts.push_back(
        angles.sin().repeat_interleave(2, /*dim=*/1).to(at::kFloat));
  }
  return {at::cat(cos_parts, /*dim=*/-1), at::cat(sin_parts, /*dim=*/-1)};
}

at::Tensor ApplyRotaryEmbedding(const at::Tensor& x, const RotaryTables& tables,
                                HeadLayout layout) {
  std::vector<int64_t> pair_shape = x.sizes().vec();
  pair_shape.back() /= 2;
  pair_shape.push_back(2);
  const at::Tensor pairs = x.reshape(pair_shape);
  const at::Tensor rotated =
      at::stack({-pairs.select(-1, 1), pairs.select(-1, 0)}, -1).flatten(-2);
  at::Tensor cos = tables.cos.to(x.device());
  at::Tensor sin = tables.sin.to(x.device());
  if (layout == HeadLayout::kTokensFirst) {
    cos = cos.unsqueeze(1);
    sin = sin.unsqueeze(1);
  }
  // A reduced-precision x meets the float32 tables inside each product's
  // kernel, which computes in float32: no float32 copy of x is made.
  return (x * cos + rotated * sin).to(x.scalar_type());
}

}  // namespace ditserve::models
