#ifndef DITSERVE_TESTS_SUPPORT_DECODED_IMAGES_H_
#define DITSERVE_TESTS_SUPPORT_DECODED_IMAGES_H_

// What a reader of the server's JPEG and WebP outputs sees: their pixels
// decoded by libjpeg-turbo and libwebp's decoders, for tests of the encoders
// and of served outputs.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::testing {

struct DecodedJpeg {
  int height = 0;
  int width = 0;
  // TurboJPEG's TJSAMP_* of the chroma planes.
  int subsampling = -1;
  // Row-major height × width × 3.
  std::string rgb;
};

// INVALID_ARGUMENT when TurboJPEG cannot decode `jpeg`.
absl::StatusOr<DecodedJpeg> DecodeJpeg(absl::string_view jpeg);

struct DecodedWebp {
  int height = 0;
  int width = 0;
  bool animated = false;
  // 0: forever. Only for an animation.
  uint32_t loop_count = 0;
  // Each frame's whole canvas, row-major height × width × 3 (the alpha the
  // decoder adds is dropped after checking it is opaque).
  std::vector<std::string> frames;
  // When each frame ends, in milliseconds from the start (libwebp's
  // timestamps); a still image's is 0.
  std::vector<int> end_ms;
};

// INVALID_ARGUMENT when libwebp cannot decode `webp` or a pixel is not
// opaque.
absl::StatusOr<DecodedWebp> DecodeWebp(absl::string_view webp);

// PSNR in dB over all samples of two RGB8 buffers; 0 when their lengths
// differ.
double Psnr(absl::string_view expected, absl::string_view actual);

// PSNR in dB of the BT.601 luma (0.299 R + 0.587 G + 0.114 B) of two RGB8
// buffers; 0 when their lengths differ. JPEG and lossy WebP keep luma at full
// resolution but chroma at half, which on the tiny random models' noise-like
// images alone caps the RGB PSNR near 22 dB whatever the quality.
double LumaPsnr(absl::string_view expected, absl::string_view actual);

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_SUPPORT_DECODED_IMAGES_H_
