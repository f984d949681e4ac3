#include "core/models/layers/rms_norm.h"

#include <torch/torch.h>

namespace ditserve::models {

at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor inverse_rms =
      at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (x32 * inverse_rms).to(x.scalar_type()) * weight;
}

RMSNormImpl::RMSNormImpl(int64_t dim, double eps)
    : eps_(eps), weight_(register_parameter("weight", torch::ones({dim}))) {}

at::Tensor RMSNormImpl::Forward(const at::Tensor& x) {
  return RmsNorm(x, weight_, eps_);
}

}  // namespace ditserve::models
