#ifndef DITSERVE_CORE_VIDEO_RGB_VIDEO_H_
#define DITSERVE_CORE_VIDEO_RGB_VIDEO_H_

// The pixels the output encoders take, and the checks they share.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ditserve::video {

// Frames of 8-bit RGB, row-major [frames, height, width, 3], as the server
// holds a decoded video (an image is one frame). Not owned.
struct RgbVideo {
  const uint8_t* data = nullptr;
  int frames = 0;
  int height = 0;
  int width = 0;
};

// INVALID_ARGUMENT, starting "`format` encoding:", for null data, frames < 1,
// or a side outside 1..max_side.
absl::Status CheckRgbVideo(absl::string_view format, const RgbVideo& video,
                           int max_side);

// INVALID_ARGUMENT, starting "`format` encoding:", for a quality outside
// libjpeg's and libwebp's 1..100.
absl::Status CheckQuality(absl::string_view format, int quality);

// INVALID_ARGUMENT, starting "`format` encoding:", for a frame rate outside
// 1..120.
absl::Status CheckFps(absl::string_view format, int fps);

}  // namespace ditserve::video

#endif  // DITSERVE_CORE_VIDEO_RGB_VIDEO_H_
