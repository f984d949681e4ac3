#include "core/families/cogvideox/cogvideox_decoder_3d.h"

#include <torch/torch.h>

namespace ditserve::families {

CogVideoXDecoder3DImpl::CogVideoXDecoder3DImpl(
    const CogVideoXVaeConfig& config) {
  const int64_t latent = config.latent_channels;
  const int64_t groups = config.norm_num_groups;
  const std::vector<int64_t>& channels = config.block_out_channels;
  conv_in_ =
      register_module("conv_in", CausalConv3d(latent, channels.back(), 3));
  mid_block_ = register_module(
      "mid_block", UpBlock3D(channels.back(), channels.back(), /*num_layers=*/2,
                             latent, groups, /*add_upsample=*/false,
                             /*compress_time=*/false));
  torch::nn::ModuleList up_blocks;
  // Up blocks run from the widest channels back to the first entry.
  int64_t previous = channels.back();
  for (size_t i = 0; i < channels.size(); ++i) {
    const int64_t out = channels[channels.size() - 1 - i];
    up_blocks_.push_back(UpBlock3D(previous, out, config.layers_per_block + 1,
                                   latent, groups,
                                   /*add_upsample=*/i + 1 < channels.size(),
                                   /*compress_time=*/static_cast<int64_t>(i) <
                                       config.temporal_upsampling_blocks()));
    up_blocks->push_back(up_blocks_.back());
    previous = out;
  }
  register_module("up_blocks", up_blocks);
  norm_out_ = register_module("norm_out",
                              SpatialNorm3D(channels.front(), latent, groups));
  conv_out_ = register_module(
      "conv_out", CausalConv3d(channels.front(), config.out_channels, 3));
}

at::Tensor CogVideoXDecoder3DImpl::Forward(const at::Tensor& z,
                                           CausalConvCache& cache) {
  cache.Rewind();
  at::Tensor h = mid_block_->Forward(conv_in_->Forward(z, cache), z, cache);
  for (UpBlock3D& block : up_blocks_) h = block->Forward(h, z, cache);
  return conv_out_->Forward(at::silu(norm_out_->Forward(h, z, cache)), cache);
}

}  // namespace ditserve::families
