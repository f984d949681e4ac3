#ifndef DITSERVE_CORE_VIDEO_WEBP_ENCODER_H_
#define DITSERVE_CORE_VIDEO_WEBP_ENCODER_H_

// WebP files of RGB8 images and videos, written in memory through libwebp,
// for OUTPUT_FORMAT_WEBP: browsers show both kinds in an <img>, so a video
// plays where an MP4 needs a player.

#include <string>

#include "absl/status/statusor.h"
#include "core/video/rgb_video.h"

namespace ditserve::video {

// Lossy WebP at `quality` (libwebp's 1..100): a still image for one frame; for
// more, an animation at `fps` that loops forever, frame i shown from
// round(i × 1000 / fps) ms (WebP's durations are whole milliseconds).
// INVALID_ARGUMENT for null data, frames < 1, a side outside 1..16383,
// quality outside 1..100 or fps outside 1..120; RESOURCE_EXHAUSTED when
// libwebp cannot allocate a picture or the animation encoder; INTERNAL,
// naming libwebp's error, when encoding fails.
absl::StatusOr<std::string> EncodeWebp(const RgbVideo& video, int fps,
                                       int quality);

}  // namespace ditserve::video

#endif  // DITSERVE_CORE_VIDEO_WEBP_ENCODER_H_
