#include "core/config/aspect_ratio_bins.h"

#include <cmath>
#include <iterator>

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

// PixArt-Sigma's 2048-pixel table: bins of its own, seven more than the
// 1024-pixel table's, not that table doubled.
constexpr AspectRatioBin kBins2048[] = {
    {0.25, {1024, 4096}}, {0.26, {1024, 3968}}, {0.27, {1024, 3840}},
    {0.28, {1024, 3712}}, {0.32, {1152, 3584}}, {0.33, {1152, 3456}},
    {0.35, {1152, 3328}}, {0.4, {1280, 3200}},  {0.42, {1280, 3072}},
    {0.48, {1408, 2944}}, {0.5, {1408, 2816}},  {0.52, {1408, 2688}},
    {0.57, {1536, 2688}}, {0.6, {1536, 2560}},  {0.68, {1664, 2432}},
    {0.72, {1664, 2304}}, {0.78, {1792, 2304}}, {0.82, {1792, 2176}},
    {0.88, {1920, 2176}}, {0.94, {1920, 2048}}, {1.0, {2048, 2048}},
    {1.07, {2048, 1920}}, {1.13, {2176, 1920}}, {1.21, {2176, 1792}},
    {1.29, {2304, 1792}}, {1.38, {2304, 1664}}, {1.46, {2432, 1664}},
    {1.67, {2560, 1536}}, {1.75, {2688, 1536}}, {2.0, {2816, 1408}},
    {2.09, {2944, 1408}}, {2.4, {3072, 1280}},  {2.5, {3200, 1280}},
    {2.89, {3328, 1152}}, {3.0, {3456, 1152}},  {3.11, {3584, 1152}},
    {3.62, {3712, 1024}}, {3.75, {3840, 1024}}, {3.88, {3968, 1024}},
    {4.0, {4096, 1024}},
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
    case 256:
      return std::vector<AspectRatioBin>(std::begin(kBins2048),
                                         std::end(kBins2048));
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
          sample_size,
          "; expected 256 (2048 px), 128 (1024 px), 64 (512 px) or 32 (256 "
          "px)"));
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
