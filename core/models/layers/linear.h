#ifndef DITSERVE_CORE_MODELS_LAYERS_LINEAR_H_
#define DITSERVE_CORE_MODELS_LAYERS_LINEAR_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/options/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace ditserve::models {

// torch::nn::Linear with its parameters (`weight` [out, in], `bias` [out]
// unless options.bias() is false) left unwritten outside a RandomParameters
// scope (parameter_init.h). A drop-in replacement, so `forward` keeps
// torch::nn's name.
class LinearImpl : public torch::nn::Module {
 public:
  explicit LinearImpl(const torch::nn::LinearOptions& options);
  LinearImpl(int64_t in_features, int64_t out_features);

  at::Tensor forward(const at::Tensor& x);

  at::Tensor weight;
  at::Tensor bias;
};
TORCH_MODULE(Linear);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_LINEAR_H_
