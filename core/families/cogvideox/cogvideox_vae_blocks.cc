#include "core/families/cogvideox/cogvideox_vae_blocks.h"

#include <torch/torch.h>

#include "core/models/vae/resnet_block_2d.h"

namespace ditserve::families {
namespace {

// Nearest-neighbour resize of [B, C, T, H, W] to (frames, height, width),
// as F.interpolate(x, size=...) computes it.
at::Tensor ResizeNearest(const at::Tensor& x, int64_t frames, int64_t height,
                         int64_t width) {
  return at::upsample_nearest3d(x, {frames, height, width});
}

// A latent-frame tensor resized to the (T, H, W) of `features`. With an odd
// T > 1 the first frame is resized on its own, as the temporal up-sampling
// kept the first frame single.
at::Tensor ResizeLikeFeatures(const at::Tensor& x, const at::Tensor& features) {
  const int64_t frames = features.size(2);
  const int64_t height = features.size(3);
  const int64_t width = features.size(4);
  if (frames > 1 && frames % 2 == 1) {
    return at::cat({ResizeNearest(x.slice(2, 0, 1), 1, height, width),
                    ResizeNearest(x.slice(2, 1), frames - 1, height, width)},
                   2);
  }
  return ResizeNearest(x, frames, height, width);
}

}  // namespace

SpatialNorm3DImpl::SpatialNorm3DImpl(int64_t channels, int64_t zq_channels,
                                     int64_t groups)
    : norm_layer_(register_module("norm_layer",
                                  models::VaeGroupNorm(groups, channels))),
      conv_y_(
          register_module("conv_y", CausalConv3d(zq_channels, channels, 1))),
      conv_b_(
          register_module("conv_b", CausalConv3d(zq_channels, channels, 1))) {}

at::Tensor SpatialNorm3DImpl::Forward(const at::Tensor& f, const at::Tensor& zq,
                                      CausalConvCache& cache) {
  // conv_y and conv_b are 1x1x1, so they commute with nearest resizing: run
  // at latent resolution, they do the same arithmetic per pixel as diffusers
  // (which resizes first) with 1/64 of the work and memory at the last
  // blocks.
  const at::Tensor scale = ResizeLikeFeatures(conv_y_->Forward(zq, cache), f);
  const at::Tensor shift = ResizeLikeFeatures(conv_b_->Forward(zq, cache), f);
  // In place: at full resolution every temporary is as large as f.
  return norm_layer_->forward(f).mul_(scale).add_(shift);
}

ResnetBlock3DImpl::ResnetBlock3DImpl(int64_t in_channels, int64_t out_channels,
                                     int64_t zq_channels, int64_t groups)
    : norm1_(register_module("norm1",
                             SpatialNorm3D(in_channels, zq_channels, groups))),
      conv1_(
          register_module("conv1", CausalConv3d(in_channels, out_channels, 3))),
      norm2_(register_module("norm2",
                             SpatialNorm3D(out_channels, zq_channels, groups))),
      conv2_(register_module("conv2",
                             CausalConv3d(out_channels, out_channels, 3))) {
  if (in_channels != out_channels) {
    conv_shortcut_ = register_module(
        "conv_shortcut",
        models::Conv3d(torch::nn::Conv3dOptions(in_channels, out_channels, 1)));
  }
}

at::Tensor ResnetBlock3DImpl::Forward(const at::Tensor& x, const at::Tensor& zq,
                                      CausalConvCache& cache) {
  // SiLU in place: the norm outputs are temporaries as large as x.
  at::Tensor h = norm1_->Forward(x, zq, cache);
  h = conv1_->Forward(at::silu_(h), cache);
  h = norm2_->Forward(h, zq, cache);
  h = conv2_->Forward(at::silu_(h), cache);
  const at::Tensor shortcut = conv_shortcut_ ? conv_shortcut_->forward(x) : x;
  return h + shortcut;
}

Upsample3DImpl::Upsample3DImpl(int64_t channels, bool compress_time)
    : compress_time_(compress_time),
      conv_(register_module(
          "conv",
          models::Conv2d(
              torch::nn::Conv2dOptions(channels, channels, 3).padding(1)))) {}

at::Tensor Upsample3DImpl::Forward(const at::Tensor& x) {
  const int64_t batch = x.size(0);
  const int64_t frames = x.size(2);
  const int64_t height = 2 * x.size(3);
  const int64_t width = 2 * x.size(4);
  at::Tensor up;
  if (!compress_time_) {
    up = ResizeNearest(x, frames, height, width);
  } else if (frames % 2 == 1) {
    // The first frame stays single so that an odd count stays odd (4X - 3
    // output frames for X latent frames).
    up = ResizeNearest(x.slice(2, 0, 1), 1, height, width);
    if (frames > 1) {
      up = at::cat(
          {up, ResizeNearest(x.slice(2, 1), 2 * (frames - 1), height, width)},
          2);
    }
  } else {
    up = ResizeNearest(x, 2 * frames, height, width);
  }
  const int64_t up_frames = up.size(2);
  const at::Tensor per_frame = up.transpose(1, 2).reshape(
      {batch * up_frames, up.size(1), height, width});
  const at::Tensor out = conv_->forward(per_frame);
  return out.reshape({batch, up_frames, out.size(1), height, width})
      .transpose(1, 2);
}

UpBlock3DImpl::UpBlock3DImpl(int64_t in_channels, int64_t out_channels,
                             int64_t num_layers, int64_t zq_channels,
                             int64_t groups, bool add_upsample,
                             bool compress_time) {
  torch::nn::ModuleList resnets;
  for (int64_t i = 0; i < num_layers; ++i) {
    resnets_.push_back(ResnetBlock3D(i == 0 ? in_channels : out_channels,
                                     out_channels, zq_channels, groups));
    resnets->push_back(resnets_.back());
  }
  register_module("resnets", resnets);
  if (add_upsample) {
    upsampler_ = Upsample3D(out_channels, compress_time);
    torch::nn::ModuleList upsamplers;
    upsamplers->push_back(upsampler_);
    register_module("upsamplers", upsamplers);
  }
}

at::Tensor UpBlock3DImpl::Forward(const at::Tensor& x, const at::Tensor& zq,
                                  CausalConvCache& cache) {
  at::Tensor h = x;
  for (ResnetBlock3D& resnet : resnets_) h = resnet->Forward(h, zq, cache);
  return upsampler_ ? upsampler_->Forward(h) : h;
}

}  // namespace ditserve::families
