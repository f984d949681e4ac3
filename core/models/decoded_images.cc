#include "core/models/decoded_images.h"

#include <torch/torch.h>

namespace ditserve::models {

DecodedImages PostprocessDecoded(const at::Tensor& raw) {
  DecodedImages out;
  out.raw = raw;
  out.image = (raw.to(at::kFloat) / 2 + 0.5).clamp(0, 1);
  out.rgb = (out.image.permute({0, 2, 3, 1}).cpu() * 255)
                .round()
                .to(at::kByte)
                .contiguous();
  return out;
}

}  // namespace ditserve::models
