#include "clients/ditctl/output_files.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace ditserve::ditctl {

std::optional<v1::OutputFormat> ParseOutputFormat(const std::string& name,
                                                  const std::string& path) {
  std::string chosen = name;
  if (chosen.empty()) {
    chosen = "png";
    for (const auto& [extension, implied] :
         {std::pair<const char*, const char*>{".mp4", "mp4"},
          {".jpg", "jpeg"},
          {".jpeg", "jpeg"},
          {".webp", "webp"}}) {
      if (absl::EndsWithIgnoreCase(path, extension)) chosen = implied;
    }
  }
  for (const auto& [known, value] :
       {std::pair<const char*, v1::OutputFormat>{"png", v1::OUTPUT_FORMAT_PNG},
        {"jpeg", v1::OUTPUT_FORMAT_JPEG},
        {"webp", v1::OUTPUT_FORMAT_WEBP},
        {"mp4", v1::OUTPUT_FORMAT_MP4},
        {"rgb8", v1::OUTPUT_FORMAT_RGB8},
        {"latent", v1::OUTPUT_FORMAT_LATENT_F32}}) {
    if (absl::AsciiStrToLower(chosen) == known) return value;
  }
  return std::nullopt;
}

std::string DefaultOutputPath(v1::OutputFormat format) {
  switch (format) {
    case v1::OUTPUT_FORMAT_JPEG:
      return "out.jpg";
    case v1::OUTPUT_FORMAT_WEBP:
      return "out.webp";
    case v1::OUTPUT_FORMAT_MP4:
      return "out.mp4";
    case v1::OUTPUT_FORMAT_RGB8:
      return "out.rgb";
    case v1::OUTPUT_FORMAT_LATENT_F32:
      return "out.f32";
    default:
      return "out.png";
  }
}

}  // namespace ditserve::ditctl
