#include "core/models/decoded_images.h"

#include <torch/torch.h>

#include <vector>

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

DecodedImages PostprocessDecodedVideo(const at::Tensor& raw) {
  const int64_t batch = raw.size(0);
  const int64_t frames = raw.size(2);
  // Each frame as an image: [B × F, 3, H, W].
  DecodedImages per_frame =
      PostprocessDecoded(raw.permute({0, 2, 1, 3, 4}).flatten(0, 1));
  DecodedImages out;
  out.raw = raw;
  const auto split_frames = [batch, frames](const at::Tensor& images) {
    std::vector<int64_t> shape = {batch, frames};
    shape.insert(shape.end(), images.sizes().begin() + 1, images.sizes().end());
    return images.reshape(shape);
  };
  out.image = split_frames(per_frame.image);
  out.rgb = split_frames(per_frame.rgb);
  return out;
}

}  // namespace ditserve::models
