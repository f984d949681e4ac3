#ifndef DITSERVE_CORE_CONFIG_ASPECT_RATIO_BINS_H_
#define DITSERVE_CORE_CONFIG_ASPECT_RATIO_BINS_H_

// PixArt's trained sizes, as diffusers' PixArt pipelines bin resolutions by
// default: generate at the trained size whose aspect ratio is nearest the
// requested one, then resize and centre-crop the image back to the request
// (families/pixart/resolution_binning.h). Here, not in the family, because
// the generated size decides the derived shapes every rank sizes buffers by.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace ditserve::config {

struct ImageSize {
  int64_t height = 0;
  int64_t width = 0;

  bool operator==(const ImageSize& other) const {
    return height == other.height && width == other.width;
  }
};

// One trained size: height / width rounded as diffusers keys its tables.
struct AspectRatioBin {
  double ratio;
  ImageSize size;
};

// diffusers' ASPECT_RATIO_1024_BIN, _512_BIN or _256_BIN, chosen by the
// transformer's sample_size (latent side 128, 64 or 32), in the tables' order.
// INVALID_ARGUMENT for other sample sizes.
absl::StatusOr<std::vector<AspectRatioBin>> AspectRatioBinsForSampleSize(
    int64_t sample_size);

// The bin whose ratio is nearest height / width (the first of equals, as
// Python's min() picks), diffusers' classify_height_width_bin. `bins` must
// not be empty.
ImageSize NearestAspectRatioBin(ImageSize requested,
                                const std::vector<AspectRatioBin>& bins);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_ASPECT_RATIO_BINS_H_
