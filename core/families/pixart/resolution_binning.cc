#include "core/families/pixart/resolution_binning.h"

#include <torch/torch.h>

#include <algorithm>

namespace ditserve::families {

at::Tensor ResizeAndCenterCrop(const at::Tensor& images,
                               config::ImageSize target) {
  const int64_t height = images.size(2);
  const int64_t width = images.size(3);
  if (height == target.height && width == target.width) return images;
  const double scale =
      std::max(static_cast<double>(target.height) / static_cast<double>(height),
               static_cast<double>(target.width) / static_cast<double>(width));
  // Python's int() truncates, as diffusers sizes the resized image; where
  // the product falls a hair below the target (58 for 1600 × 58 / 1600 is
  // 57.99...), diffusers crops a 1-pixel strip, and the target is kept.
  const int64_t resized_height = std::max<int64_t>(
      target.height, static_cast<int64_t>(static_cast<double>(height) * scale));
  const int64_t resized_width = std::max<int64_t>(
      target.width, static_cast<int64_t>(static_cast<double>(width) * scale));
  const at::Tensor resized = torch::nn::functional::interpolate(
      images, torch::nn::functional::InterpolateFuncOptions()
                  .size(std::vector<int64_t>{resized_height, resized_width})
                  .mode(torch::kBilinear)
                  .align_corners(false));
  const int64_t top = (resized_height - target.height) / 2;
  const int64_t left = (resized_width - target.width) / 2;
  return resized.slice(2, top, top + target.height)
      .slice(3, left, left + target.width);
}

}  // namespace ditserve::families
