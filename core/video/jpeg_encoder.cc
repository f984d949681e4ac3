#include "core/video/jpeg_encoder.h"

#include <turbojpeg.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::video {
namespace {

// JPEG's frame header stores each side in 16 bits; libjpeg stops at 65500.
constexpr int kMaxSide = 65500;

struct CompressorDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};
struct BufferDeleter {
  void operator()(unsigned char* buffer) const { tjFree(buffer); }
};

absl::Status CheckInput(const RgbVideo& image, int quality) {
  RETURN_IF_ERROR(CheckRgbVideo("JPEG", image, kMaxSide));
  if (image.frames != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "JPEG encoding: a JPEG holds one frame, got ", image.frames));
  }
  return CheckQuality("JPEG", quality);
}

}  // namespace

absl::StatusOr<std::string> EncodeJpeg(const RgbVideo& image, int quality) {
  RETURN_IF_ERROR(CheckInput(image, quality));
  std::unique_ptr<void, CompressorDeleter> compressor(tjInitCompress());
  if (compressor == nullptr) {
    return absl::InternalError(absl::StrCat(
        "JPEG encoding: tjInitCompress failed: ", tjGetErrorStr2(nullptr)));
  }
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): TurboJPEG's type.
  const int result = tjCompress2(
      compressor.get(), image.data, image.width, /*pitch=*/0, image.height,
      TJPF_RGB, &jpeg, &size, TJSAMP_420, quality, TJFLAG_ACCURATEDCT);
  const std::unique_ptr<unsigned char, BufferDeleter> owned(jpeg);
  if (result != 0) {
    return absl::InternalError(
        absl::StrCat("JPEG encoding: tjCompress2 failed: ",
                     tjGetErrorStr2(compressor.get())));
  }
  return std::string(reinterpret_cast<const char*>(jpeg), size);
}

}  // namespace ditserve::video
