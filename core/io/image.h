#ifndef DITSERVE_CORE_IO_IMAGE_H_
#define DITSERVE_CORE_IO_IMAGE_H_

// RGB8 images as (H, W, 3) uint8 CPU tensors, PNG encoding and decoding, and
// the conversion of a VAE decoder output to such images exactly as diffusers'
// VaeImageProcessor.postprocess does it.

#include <ATen/core/Tensor.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::io {

// PNG bytes (8-bit RGB, no alpha) of an (H, W, 3) uint8 tensor.
absl::StatusOr<std::string> EncodePng(const at::Tensor& rgb8);

// An (H, W, 3) uint8 tensor from PNG bytes of any colour type and bit depth
// (converted to 8-bit RGB; alpha is composited onto black, grey expanded).
absl::StatusOr<at::Tensor> DecodePng(absl::string_view png);

// Decoder output (B, 3, H, W) in [-1, 1] -> (image / 2 + 0.5).clamp(0, 1),
// the same layout and dtype (output_type="pt").
absl::StatusOr<at::Tensor> DenormalizeImage(const at::Tensor& decoded);

// (B, 3, H, W) in [0, 1] -> (B, H, W, 3) uint8 via round(x * 255) in float32
// (output_type="pil"; numpy rounds halves to even, as torch does).
absl::StatusOr<at::Tensor> ToRgb8(const at::Tensor& image);

}  // namespace ditserve::io

#endif  // DITSERVE_CORE_IO_IMAGE_H_
