#include "core/video/rgb_video.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ditserve::video {
namespace {

constexpr int kMinFps = 1;
constexpr int kMaxFps = 120;

}  // namespace

absl::Status CheckRgbVideo(absl::string_view format, const RgbVideo& video,
                           int max_side) {
  if (video.data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(format, " encoding: video data is null"));
  }
  if (video.frames < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        format, " encoding: frames must be at least 1, got ", video.frames));
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"height", video.height},
        {"width", video.width}}) {
    if (value < 1 || value > max_side) {
      return absl::InvalidArgumentError(
          absl::StrCat(format, " encoding: ", name, " must be 1..", max_side,
                       ", got ", value));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckQuality(absl::string_view format, int quality) {
  if (quality < 1 || quality > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        format, " encoding: quality must be 1..100, got ", quality));
  }
  return absl::OkStatus();
}

absl::Status CheckFps(absl::string_view format, int fps) {
  if (fps < kMinFps || fps > kMaxFps) {
    return absl::InvalidArgumentError(
        absl::StrCat(format, " encoding: fps must be ", kMinFps, "..", kMaxFps,
                     ", got ", fps));
  }
  return absl::OkStatus();
}

}  // namespace ditserve::video
