#ifndef DITSERVE_CORE_MODELS_DECODED_IMAGES_H_
#define DITSERVE_CORE_MODELS_DECODED_IMAGES_H_

#include <ATen/core/Tensor.h>

namespace ditserve::models {

// What a VAE decode turns into, as diffusers' VaeImageProcessor.postprocess
// produces it.
struct DecodedImages {
  // Decoder output [B, 3, H, W], roughly [-1, 1].
  at::Tensor raw;
  // (raw / 2 + 0.5).clamp(0, 1), float32 [B, 3, H, W] (output_type="pt").
  at::Tensor image;
  // round(image * 255) as uint8 [B, H, W, 3] on the CPU (output_type="pil").
  at::Tensor rgb;
};

// Post-processes decoder output (any device and dtype; computed in float32).
DecodedImages PostprocessDecoded(const at::Tensor& raw);

// The same for a video decoder's output [B, 3, F, H, W], as diffusers'
// VideoProcessor.postprocess_video: raw as given, image [B, F, 3, H, W]
// (output_type="pt"), rgb [B, F, H, W, 3] (output_type="pil").
DecodedImages PostprocessDecodedVideo(const at::Tensor& raw);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_DECODED_IMAGES_H_
