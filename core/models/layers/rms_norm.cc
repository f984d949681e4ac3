#include "core/models/layers/rms_norm.h"

#include <torch/torch.h>
#include <torch/version.h>

namespace ditserve::models {

at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  // One fused kernel on CUDA (torch.nn.RMSNorm's, which diffusers' FLUX
  // uses) instead of one pass per operation. It accumulates in float32 as
  // well, and rounds once where the passes round twice.
  if (x.scalar_type() == weight.scalar_type()) {
    return at::rms_norm(x, {x.size(-1)}, weight, eps);
  }
#endif
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor normed =
      x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  const c10::ScalarType weight_dtype = weight.scalar_type();
  const bool reduced =
      weight_dtype == at::kBFloat16 || weight_dtype == at::kHalf;
  return normed.to(reduced ? weight_dtype : x.scalar_type()) * weight;
}

RMSNormImpl::RMSNormImpl(int64_t dim, double eps)
    : eps_(eps), weight_(register_parameter("weight", torch::ones({dim}))) {}

at::Tensor RMSNormImpl::Forward(const at::Tensor& x) {
  return RmsNorm(x, weight_, eps_);
}

}  // namespace ditserve::models
