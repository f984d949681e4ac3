#ifndef DITSERVE_CORE_FAMILIES_PIXART_RESOLUTION_BINNING_H_
#define DITSERVE_CORE_FAMILIES_PIXART_RESOLUTION_BINNING_H_

// The image half of PixArt's resolution binning: the model generates at the
// trained size nearest the request (config/aspect_ratio_bins.h) and the
// decoded image is resized and centre-cropped back to the request.

#include <ATen/core/Tensor.h>

#include "core/config/aspect_ratio_bins.h"

namespace ditserve::families {

// diffusers' resize_and_crop_tensor: images [B, C, H, W] scaled bilinearly
// (align_corners=false) by the larger of the two side ratios so they cover
// `target`, then centre-cropped to it. Unchanged when already that size.
at::Tensor ResizeAndCenterCrop(const at::Tensor& images,
                               config::ImageSize target);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_PIXART_RESOLUTION_BINNING_H_
