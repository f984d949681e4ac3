#include "core/models/layers/conv.h"

#include <torch/torch.h>

#include <stdexcept>
#include <variant>
#include <vector>

#include "core/models/layers/cpu_gemm.h"
#include "core/models/layers/parameter_init.h"

namespace ditserve::models {
namespace {

template <size_t D>
std::vector<int64_t> WeightShape(const torch::nn::ConvOptions<D>& options) {
  std::vector<int64_t> shape = {options.out_channels(),
                                options.in_channels() / options.groups()};
  for (int64_t size : *options.kernel_size()) shape.push_back(size);
  return shape;
}

template <size_t D>
torch::ExpandingArray<D> NumericPadding(
    const torch::nn::ConvOptions<D>& options) {
  // The options' variants are std::variant from LibTorch 2.x and c10's own
  // before: argument-dependent lookup picks c10's functions for the latter.
  using std::get_if;
  using std::holds_alternative;
  const auto* padding = get_if<torch::ExpandingArray<D>>(&options.padding());
  if (padding == nullptr ||
      !holds_alternative<torch::enumtype::kZeros>(options.padding_mode())) {
    throw std::invalid_argument(
        "convolution: only numeric zero padding is implemented");
  }
  return *padding;
}

}  // namespace

template <size_t D>
ConvImpl<D>::ConvImpl(const torch::nn::ConvOptions<D>& options)
    : weight(register_parameter("weight",
                                UnwrittenParameter(WeightShape(options)))),
      options_(options),
      padding_(NumericPadding(options)) {
  if (options.bias()) {
    bias = register_parameter("bias",
                              UnwrittenParameter({options.out_channels()}));
  }
  DrawWeightAndBias(weight, bias);
}

template <size_t D>
at::Tensor ConvImpl<D>::forward(const at::Tensor& x) {
  // ATen sends float32 convolutions of small inputs (under 20480 elements
  // in their first four dimensions, as a VAE's conv_in at 256² or
  // CogVideoX's SpatialNorm convolutions at latent resolution) and, at one
  // thread, 1x1 ones to im2col and the BLAS library. OpenBLAS's kernels stop
  // at AVX2, and its idle threads then busy-wait about 2^28 cycles beside the
  // oneDNN work that follows: at two threads that took a core for most of a
  // 256² VAE decode and a fifth of a CogVideoX one (bench/compare_diffusers:
  // vae_decode_256, cogvideox_5b_decode).
  if (x.dim() == D + 2 && OneDnnTakes(x, weight) && at::hasMKLDNN()) {
    return at::mkldnn_convolution(x, weight, bias, *padding_,
                                  *options_.stride(), *options_.dilation(),
                                  options_.groups());
  }
  if constexpr (D == 2) {
    return at::conv2d(x, weight, bias, *options_.stride(), *padding_,
                      *options_.dilation(), options_.groups());
  } else {
    return at::conv3d(x, weight, bias, *options_.stride(), *padding_,
                      *options_.dilation(), options_.groups());
  }
}

template class ConvImpl<2>;
template class ConvImpl<3>;

}  // namespace ditserve::models
