#include "core/video/webp_encoder.h"

#include <webp/encode.h>
#include <webp/mux.h>
#include <webp/mux_types.h>

#include <cmath>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::video {
namespace {

struct AnimEncoderDeleter {
  void operator()(WebPAnimEncoder* encoder) const {
    WebPAnimEncoderDelete(encoder);
  }
};

// A picture that holds its own ARGB copy of one RGB8 frame.
class Picture {
 public:
  Picture() { WebPPictureInit(&picture_); }
  Picture(const Picture&) = delete;
  Picture& operator=(const Picture&) = delete;
  ~Picture() { WebPPictureFree(&picture_); }
  WebPPicture* get() { return &picture_; }

 private:
  WebPPicture picture_;
};

absl::Status CheckInput(const RgbVideo& video, int fps, int quality) {
  RETURN_IF_ERROR(CheckRgbVideo("WebP", video, WEBP_MAX_DIMENSION));
  RETURN_IF_ERROR(CheckQuality("WebP", quality));
  return CheckFps("WebP", fps);
}

absl::StatusOr<WebPConfig> LossyConfig(int quality) {
  WebPConfig config;
  if (!WebPConfigInit(&config)) {
    return absl::InternalError(
        "WebP encoding: libwebp's headers and library differ in version");
  }
  config.quality = static_cast<float>(quality);
  return config;
}

// Frame `index` of `video` imported into `picture`.
absl::Status Import(const RgbVideo& video, int index, Picture& picture) {
  WebPPicture* frame = picture.get();
  frame->width = video.width;
  frame->height = video.height;
  // ARGB, which the animation encoder needs, for stills too: both then reach
  // YUV through the same conversion.
  frame->use_argb = 1;
  const int stride = video.width * 3;
  const uint8_t* pixels =
      video.data + static_cast<size_t>(index) * video.height * stride;
  if (!WebPPictureImportRGB(frame, pixels, stride)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("WebP encoding: no memory for a ", video.width, "x",
                     video.height, " picture"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> EncodeStill(const RgbVideo& video,
                                        const WebPConfig& config) {
  Picture picture;
  RETURN_IF_ERROR(Import(video, 0, picture));
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  picture.get()->writer = WebPMemoryWrite;
  picture.get()->custom_ptr = &writer;
  if (!WebPEncode(&config, picture.get())) {
    WebPMemoryWriterClear(&writer);
    return absl::InternalError(
        absl::StrCat("WebP encoding: WebPEncode failed with error ",
                     picture.get()->error_code));
  }
  std::string webp(reinterpret_cast<const char*>(writer.mem), writer.size);
  WebPMemoryWriterClear(&writer);
  return webp;
}

int64_t TimestampMs(int frame, int fps) {
  return std::llround(frame * 1000.0 / fps);
}

absl::StatusOr<std::string> EncodeAnimation(const RgbVideo& video, int fps,
                                            const WebPConfig& config) {
  WebPAnimEncoderOptions options;
  if (!WebPAnimEncoderOptionsInit(&options)) {
    return absl::InternalError(
        "WebP encoding: libwebpmux's headers and library differ in version");
  }
  options.anim_params.loop_count = 0;
  std::unique_ptr<WebPAnimEncoder, AnimEncoderDeleter> encoder(
      WebPAnimEncoderNew(video.width, video.height, &options));
  if (encoder == nullptr) {
    return absl::ResourceExhaustedError(
        "WebP encoding: no memory for the animation encoder");
  }
  const auto failed = [&](const char* call) {
    return absl::InternalError(
        absl::StrCat("WebP encoding: ", call,
                     " failed: ", WebPAnimEncoderGetError(encoder.get())));
  };
  for (int frame = 0; frame < video.frames; ++frame) {
    Picture picture;
    RETURN_IF_ERROR(Import(video, frame, picture));
    if (!WebPAnimEncoderAdd(encoder.get(), picture.get(),
                            static_cast<int>(TimestampMs(frame, fps)),
                            &config)) {
      return failed("WebPAnimEncoderAdd");
    }
  }
  // The end time gives the last frame its duration.
  if (!WebPAnimEncoderAdd(encoder.get(), nullptr,
                          static_cast<int>(TimestampMs(video.frames, fps)),
                          nullptr)) {
    return failed("WebPAnimEncoderAdd (end)");
  }
  WebPData data;
  WebPDataInit(&data);
  if (!WebPAnimEncoderAssemble(encoder.get(), &data)) {
    WebPDataClear(&data);
    return failed("WebPAnimEncoderAssemble");
  }
  std::string webp(reinterpret_cast<const char*>(data.bytes), data.size);
  WebPDataClear(&data);
  return webp;
}

}  // namespace

absl::StatusOr<std::string> EncodeWebp(const RgbVideo& video, int fps,
                                       int quality) {
  RETURN_IF_ERROR(CheckInput(video, fps, quality));
  ASSIGN_OR_RETURN(const WebPConfig config, LossyConfig(quality));
  if (video.frames == 1) return EncodeStill(video, config);
  return EncodeAnimation(video, fps, config);
}

}  // namespace ditserve::video
