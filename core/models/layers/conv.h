#ifndef DITSERVE_CORE_MODELS_LAYERS_CONV_H_
#define DITSERVE_CORE_MODELS_LAYERS_CONV_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/options/conv.h>
#include <torch/nn/pimpl.h>

#include <cstddef>

namespace ditserve::models {

// torch::nn::Conv2d / Conv3d with their parameters (`weight`
// [out, in / groups, kernel...], `bias` [out] unless options.bias() is false)
// left unwritten outside a RandomParameters scope (parameter_init.h). A
// drop-in replacement, so `forward` keeps torch::nn's name. Numeric zero
// padding only; other padding throws std::invalid_argument.
template <size_t D>
class ConvImpl : public torch::nn::Module {
 public:
  explicit ConvImpl(const torch::nn::ConvOptions<D>& options);

  at::Tensor forward(const at::Tensor& x);

  at::Tensor weight;
  at::Tensor bias;

 private:
  torch::nn::ConvOptions<D> options_;
  torch::ExpandingArray<D> padding_;
};

class Conv2dImpl : public ConvImpl<2> {
  using ConvImpl<2>::ConvImpl;
};
TORCH_MODULE(Conv2d);

class Conv3dImpl : public ConvImpl<3> {
  using ConvImpl<3>::ConvImpl;
};
TORCH_MODULE(Conv3d);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_CONV_H_
