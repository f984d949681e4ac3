#ifndef DITSERVE_CORE_VIDEO_MP4_ENCODER_H_
#define DITSERVE_CORE_VIDEO_MP4_ENCODER_H_

// MP4 files (H.264, yuv420p) of RGB8 videos, written in memory through
// FFmpeg's libraries, for OUTPUT_FORMAT_MP4.

#include <string>

#include "absl/status/statusor.h"
#include "core/video/rgb_video.h"

namespace ditserve::video {

// The whole MP4 file: H.264 (libx264, crf 18), yuv420p (BT.601, limited
// range), `fps` frames per second, the moov atom first so that players can
// start before the last byte arrives. The same input gives the same bytes on
// machines with the same SIMD extensions (x264's variants differ in rounding).
// INVALID_ARGUMENT for null data, frames < 1, height or width not positive and
// even, fps outside 1..120; FAILED_PRECONDITION when FFmpeg has no H.264
// encoder; INTERNAL, naming the FFmpeg call, when FFmpeg fails.
absl::StatusOr<std::string> EncodeMp4(const RgbVideo& video, int fps);

}  // namespace ditserve::video

#endif  // DITSERVE_CORE_VIDEO_MP4_ENCODER_H_
