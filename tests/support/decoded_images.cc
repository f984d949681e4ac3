#include "tests/support/decoded_images.h"

#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::testing {
namespace {

struct DecompressorDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};
struct AnimDecoderDeleter {
  void operator()(WebPAnimDecoder* decoder) const {
    WebPAnimDecoderDelete(decoder);
  }
};

}  // namespace

absl::StatusOr<DecodedJpeg> DecodeJpeg(absl::string_view jpeg) {
  std::unique_ptr<void, DecompressorDeleter> decompressor(tjInitDecompress());
  const auto* bytes = reinterpret_cast<const unsigned char*>(jpeg.data());
  DecodedJpeg decoded;
  int colorspace = 0;
  if (tjDecompressHeader3(decompressor.get(), bytes, jpeg.size(),
                          &decoded.width, &decoded.height, &decoded.subsampling,
                          &colorspace) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a JPEG: ", tjGetErrorStr2(decompressor.get())));
  }
  decoded.rgb.resize(static_cast<size_t>(decoded.width) * decoded.height * 3);
  if (tjDecompress2(decompressor.get(), bytes, jpeg.size(),
                    reinterpret_cast<unsigned char*>(decoded.rgb.data()),
                    decoded.width, /*pitch=*/0, decoded.height, TJPF_RGB,
                    TJFLAG_ACCURATEDCT) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "JPEG does not decode: ", tjGetErrorStr2(decompressor.get())));
  }
  return decoded;
}

absl::StatusOr<DecodedWebp> DecodeWebp(absl::string_view webp) {
  const WebPData data{reinterpret_cast<const uint8_t*>(webp.data()),
                      webp.size()};
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data.bytes, data.size, &features) != VP8_STATUS_OK) {
    return absl::InvalidArgumentError("not a WebP");
  }
  WebPAnimDecoderOptions options;
  WebPAnimDecoderOptionsInit(&options);
  options.color_mode = MODE_RGBA;
  std::unique_ptr<WebPAnimDecoder, AnimDecoderDeleter> decoder(
      WebPAnimDecoderNew(&data, &options));
  WebPAnimInfo info;
  if (decoder == nullptr || !WebPAnimDecoderGetInfo(decoder.get(), &info)) {
    return absl::InvalidArgumentError("WebP does not decode");
  }
  DecodedWebp decoded;
  decoded.width = static_cast<int>(info.canvas_width);
  decoded.height = static_cast<int>(info.canvas_height);
  decoded.animated = features.has_animation != 0;
  decoded.loop_count = info.loop_count;
  const size_t pixels = size_t{info.canvas_width} * info.canvas_height;
  while (WebPAnimDecoderHasMoreFrames(decoder.get())) {
    uint8_t* rgba = nullptr;
    int timestamp = 0;
    if (!WebPAnimDecoderGetNext(decoder.get(), &rgba, &timestamp)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WebP frame ", decoded.frames.size(), " does not decode"));
    }
    std::string rgb(pixels * 3, '\0');
    for (size_t i = 0; i < pixels; ++i) {
      if (rgba[4 * i + 3] != 255) {
        return absl::InvalidArgumentError(
            absl::StrCat("WebP frame ", decoded.frames.size(),
                         " has a pixel of alpha ", rgba[4 * i + 3]));
      }
      std::copy_n(rgba + 4 * i, 3, rgb.begin() + 3 * i);
    }
    decoded.frames.push_back(std::move(rgb));
    decoded.end_ms.push_back(decoded.animated ? timestamp : 0);
  }
  return decoded;
}

namespace {

double PsnrOfSquaredError(double squared_error, size_t samples) {
  const double mse = squared_error / std::max<size_t>(samples, 1);
  return 10 * std::log10(255.0 * 255.0 / std::max(mse, 1e-12));
}

double Luma(absl::string_view rgb, size_t pixel) {
  const auto* p = reinterpret_cast<const uint8_t*>(rgb.data()) + 3 * pixel;
  return 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
}

}  // namespace

double Psnr(absl::string_view expected, absl::string_view actual) {
  if (expected.size() != actual.size()) return 0;
  double squared_error = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double difference =
        static_cast<double>(static_cast<uint8_t>(expected[i])) -
        static_cast<uint8_t>(actual[i]);
    squared_error += difference * difference;
  }
  return PsnrOfSquaredError(squared_error, expected.size());
}

double LumaPsnr(absl::string_view expected, absl::string_view actual) {
  if (expected.size() != actual.size()) return 0;
  const size_t pixels = expected.size() / 3;
  double squared_error = 0;
  for (size_t i = 0; i < pixels; ++i) {
    const double difference = Luma(expected, i) - Luma(actual, i);
    squared_error += difference * difference;
  }
  return PsnrOfSquaredError(squared_error, pixels);
}

}  // namespace ditserve::testing
