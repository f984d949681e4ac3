#include "core/families/sd3/sd3_patch_embed.h"

#include <torch/torch.h>

namespace ditserve::models {

SD3PatchEmbedImpl::SD3PatchEmbedImpl(int64_t in_channels, int64_t dim,
                                     int64_t patch_size,
                                     int64_t pos_embed_max_size)
    : pos_embed_max_size_(pos_embed_max_size),
      proj_(register_module(
          "proj", Conv2d(torch::nn::Conv2dOptions(in_channels, dim, patch_size)
                             .stride(patch_size)))) {
  pos_embed_ = register_buffer(
      "pos_embed",
      torch::zeros({1, pos_embed_max_size * pos_embed_max_size, dim}));
}

at::Tensor SD3PatchEmbedImpl::CroppedTable(int64_t grid_height,
                                           int64_t grid_width) const {
  const int64_t top = (pos_embed_max_size_ - grid_height) / 2;
  const int64_t left = (pos_embed_max_size_ - grid_width) / 2;
  return pos_embed_.reshape({1, pos_embed_max_size_, pos_embed_max_size_, -1})
      .slice(1, top, top + grid_height)
      .slice(2, left, left + grid_width)
      .reshape({1, grid_height * grid_width, -1});
}

at::Tensor SD3PatchEmbedImpl::Forward(const at::Tensor& latent) {
  const at::Tensor patches = proj_->forward(latent);
  const at::Tensor table = CroppedTable(patches.size(2), patches.size(3));
  return (patches.flatten(2).transpose(1, 2) + table).to(patches.scalar_type());
}

}  // namespace ditserve::models
