#ifndef DITSERVE_CORE_VIDEO_JPEG_ENCODER_H_
#define DITSERVE_CORE_VIDEO_JPEG_ENCODER_H_

// JPEG files of RGB8 images, written in memory through libjpeg-turbo's
// TurboJPEG API, for OUTPUT_FORMAT_JPEG (a video gets one per frame).

#include <string>

#include "absl/status/statusor.h"
#include "core/video/rgb_video.h"

namespace ditserve::video {

// Baseline JFIF at `quality` (libjpeg's 1..100) with 4:2:0 chroma, the
// layout every decoder reads and the one PIL writes by default, and the
// accurate integer DCT (TurboJPEG's default, the fast one, loses detail at the
// high qualities people ask of generated images).
// `image` must hold one frame. INVALID_ARGUMENT for null data, frames other
// than 1, a side outside 1..65500 (libjpeg's limit) or quality outside 1..100;
// INTERNAL, naming TurboJPEG's error, when encoding fails.
absl::StatusOr<std::string> EncodeJpeg(const RgbVideo& image, int quality);

}  // namespace ditserve::video

#endif  // DITSERVE_CORE_VIDEO_JPEG_ENCODER_H_
