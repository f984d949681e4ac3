#include "core/config/aspect_ratio_bins.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::config {
namespace {

// The 1024-pixel table; the 512 and 256 tables are the same bins at 1/2 and
// 1/4 of the size (diffusers lists them separately; every entry halves).
constexpr AspectRatioBin kBins1024[] = {
    {0.25, {512, 2048}}, {0.28, {512, 1856}}, {0.32, {576, 1792}},
    {0.33, {576, 1728}}, {0.35, {576, 1664}}, {0.4, {640, 1600}},
    {0.42, {640, 1536}}, {0.48, {704, 1472}}, {0.5, {704, 1408}},
    {0.52, {704, 1344}}, {0.57, {768, 1344}}, {0.6, {768, 1280}},
    {0.68, {832, 1216}}, {0.72, {832, 1152}}, {0.78, {896, 1152}},
    {0.82, {896, 1088}}, {0.88, {960, 1088}}, {0.94, {960, 1024}},
    {1.0, {1024, 1024}}, {1.07, {1024, 960}}, {1.13, {1088, 960}},
    {1.21, {1088, 896}}, {1.29, {1152, 896}}, {1.38, {1152, 832}},
    {1.46, {1216, 832}}, {1.67, {1280, 768}}, {1.75, {1344, 768}},
    {2.0, {1408, 704}},  {2.09, {1472, 704}}, {2.4, {1536, 640}},
    {2.5, {1600, 640}},  {3.0, {1728, 576}},  {4.0, {2048, 512}},
};

std::vector<AspectRatioBin> ScaledBins(int64_t divisor) {
  std::vector<AspectRatioBin> bins;
  for (const AspectRatioBin& bin : kBins1024) {
    bins.push_back(
        {bin.ratio, {bin.size.height / divisor, bin.size.width / divisor}});
  }
  return bins;
}

}  // namespace

absl::StatusOr<std::vector<AspectRatioBin>> AspectRatioBinsForSampleSize(
    int64_t sample_size) {
  switch (sample_size) {
    case 128:
      return ScaledBins(1);
    case 64:
      return ScaledBins(2);
    case 32:
      return ScaledBins(4);
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "resolution binning has no aspect-ratio table for transformer "
          "sample_size ",
          sample_size, "; expected 128 (1024 px), 64 (512 px) or 32 (256 px)"));
  }
}

ImageSize NearestAspectRatioBin(ImageSize requested,
                                const std::vector<AspectRatioBin>& bins) {
  const double ratio = static_cast<double>(requested.height) /
                       static_cast<double>(requested.width);
  const AspectRatioBin* nearest = &bins.front();
  for (const AspectRatioBin& bin : bins) {
    if (std::abs(bin.ratio - ratio) < std::abs(nearest->ratio - ratio)) {
      nearest = &bin;
    }
  }
  return nearest->size;
}

}  // namespace ditserve::config
