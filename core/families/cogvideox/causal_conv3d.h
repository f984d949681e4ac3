#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_CAUSAL_CONV3D_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_CAUSAL_CONV3D_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/models/layers/conv.h"

namespace ditserve::families {

// What the causal convolutions of one decoder pass leave for the next pass
// over the following frames (diffusers' `conv_cache`): per conv, the last
// kernel_t - 1 frames of its time-padded input. Slots are handed out in the
// order the convs run, which is the same in every pass of a decode, so no
// names are needed.
class CausalConvCache {
 public:
  // Called at the start of every pass.
  void Rewind() { next_ = 0; }
  // The next conv's slot: undefined in the first pass. Valid until the next
  // call.
  at::Tensor& NextSlot();

 private:
  std::vector<at::Tensor> slots_;
  size_t next_ = 0;
};

// diffusers CogVideoXCausalConv3d (pad_mode "first", stride 1): a cubic
// Conv3d (`conv`) with zero spatial padding and kernel - 1 frames of time
// padding in front only, so an output frame sees no later input frame. The
// first pass pads with copies of the first frame, later passes with the
// cached frames of the previous one. A kernel of 1 needs no padding and
// leaves the cache alone.
class CausalConv3dImpl : public torch::nn::Module {
 public:
  CausalConv3dImpl(int64_t in_channels, int64_t out_channels,
                   int64_t kernel_size);

  // x [B, C, T, H, W] -> [B, out_channels, T, H, W].
  at::Tensor Forward(const at::Tensor& x, CausalConvCache& cache);

 private:
  int64_t time_pad_;
  models::Conv3d conv_;
};
TORCH_MODULE(CausalConv3d);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_CAUSAL_CONV3D_H_
