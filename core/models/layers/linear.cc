#include "core/models/layers/linear.h"

#include <torch/torch.h>

#include "core/models/layers/cpu_gemm.h"
#include "core/models/layers/parameter_init.h"

namespace ditserve::models {

LinearImpl::LinearImpl(const torch::nn::LinearOptions& options)
    : weight(register_parameter(
          "weight", UnwrittenParameter(
                        {options.out_features(), options.in_features()}))) {
  if (options.bias()) {
    bias = register_parameter("bias",
                              UnwrittenParameter({options.out_features()}));
  }
  DrawWeightAndBias(weight, bias);
}

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features)
    : LinearImpl(torch::nn::LinearOptions(in_features, out_features)) {}

at::Tensor LinearImpl::forward(const at::Tensor& x) {
  return ApplyLinear(x, weight, bias);
}

}  // namespace ditserve::models
