#include "core/io/image.h"

#include <png.h>
#include <torch/torch.h>

#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::io {
namespace {

// Releases libpng's state on every return path.
struct PngImage {
  png_image image;
  PngImage() {
    std::memset(&image, 0, sizeof(image));
    image.version = PNG_IMAGE_VERSION;
  }
  ~PngImage() { png_image_free(&image); }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;
};

absl::Status CheckBatchOfRgb(const at::Tensor& image, const char* what) {
  if (!image.defined() || image.dim() != 4 || image.size(1) != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be (batch, 3, height, width), got ",
        image.defined() ? c10::str(image.sizes()) : std::string("undefined")));
  }
  if (!image.is_floating_point()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be floating point, got ",
                     c10::toString(image.scalar_type())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> EncodePng(const at::Tensor& rgb8) {
  if (!rgb8.defined() || rgb8.dim() != 3 || rgb8.size(2) != 3 ||
      rgb8.scalar_type() != at::kByte) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PNG encoding needs an (height, width, 3) uint8 tensor, got ",
        rgb8.defined() ? absl::StrCat(c10::str(rgb8.sizes()), " ",
                                      c10::toString(rgb8.scalar_type()))
                       : std::string("undefined")));
  }
  if (rgb8.size(0) == 0 || rgb8.size(1) == 0 ||
      rgb8.size(0) > PNG_UINT_31_MAX || rgb8.size(1) > PNG_UINT_31_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PNG cannot hold a ", rgb8.size(0), "x", rgb8.size(1), " image"));
  }
  const at::Tensor pixels = rgb8.to(at::kCPU).contiguous();
  PngImage png;
  png.image.width = static_cast<png_uint_32>(pixels.size(1));
  png.image.height = static_cast<png_uint_32>(pixels.size(0));
  png.image.format = PNG_FORMAT_RGB;
  // Room for the largest PNG of the image, so that one call compresses it:
  // asked for the size first, libpng compresses the whole image to count.
  png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(png.image);
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(&png.image, bytes.data(), &size, 0,
                                 pixels.data_ptr(), 0, nullptr)) {
    return absl::InternalError(
        absl::StrCat("PNG encoding failed: ", png.image.message));
  }
  bytes.resize(size);
  bytes.shrink_to_fit();
  return bytes;
}

absl::StatusOr<at::Tensor> DecodePng(absl::string_view png_bytes) {
  PngImage png;
  if (!png_image_begin_read_from_memory(&png.image, png_bytes.data(),
                                        png_bytes.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a readable PNG (", png_bytes.size(),
                     " bytes): ", png.image.message));
  }
  png.image.format = PNG_FORMAT_RGB;
  at::Tensor pixels = torch::empty({static_cast<int64_t>(png.image.height),
                                    static_cast<int64_t>(png.image.width), 3},
                                   torch::kUInt8);
  if (!png_image_finish_read(&png.image, /*background=*/nullptr,
                             pixels.data_ptr(), 0, nullptr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PNG decoding failed: ", png.image.message));
  }
  return pixels;
}

absl::StatusOr<at::Tensor> DenormalizeImage(const at::Tensor& decoded) {
  RETURN_IF_ERROR(CheckBatchOfRgb(decoded, "decoder output"));
  return (decoded / 2 + 0.5).clamp(0, 1);
}

absl::StatusOr<at::Tensor> ToRgb8(const at::Tensor& image) {
  RETURN_IF_ERROR(CheckBatchOfRgb(image, "image"));
  return (image.permute({0, 2, 3, 1}).to(at::kCPU, at::kFloat) * 255)
      .round()
      .clamp(0, 255)
      .to(at::kByte)
      .contiguous();
}

}  // namespace ditserve::io
