#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_PATCH_EMBED_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_PATCH_EMBED_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "core/models/layers/conv.h"

namespace ditserve::models {

// diffusers PatchEmbed as SD3 builds it: `proj` is a patch_size-strided
// convolution; `pos_embed` is a stored [1, max_size^2, dim] sincos table
// (a checkpoint buffer) whose centre is cropped to the patch grid.
class SD3PatchEmbedImpl : public torch::nn::Module {
 public:
  SD3PatchEmbedImpl(int64_t in_channels, int64_t dim, int64_t patch_size,
                    int64_t pos_embed_max_size);

  // latent [B, C, H, W] -> tokens [B, (H / p) * (W / p), dim]. The grid must
  // fit in the table (the caller checks; see SD3TransformerConfig).
  at::Tensor Forward(const at::Tensor& latent);

 private:
  at::Tensor CroppedTable(int64_t grid_height, int64_t grid_width) const;

  int64_t pos_embed_max_size_;
  Conv2d proj_;
  at::Tensor pos_embed_;
};
TORCH_MODULE(SD3PatchEmbed);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_PATCH_EMBED_H_
