#include "core/dist/wire_view.h"

#include <ATen/ATen.h>

namespace ditserve::dist {

at::Tensor WireView(const at::Tensor& tensor) {
  if (tensor.scalar_type() != at::kBFloat16) return tensor;
  return tensor.view(at::kHalf);
}

std::vector<at::Tensor> WireViews(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) views.push_back(WireView(tensor));
  return views;
}

}  // namespace ditserve::dist
