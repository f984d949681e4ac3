#include "core/models/layers/ada_layer_norm.h"

#include <torch/torch.h>

namespace ditserve::models {
namespace {

// diffusers' AdaLayerNormZero(-Single) use a LayerNorm with eps 1e-6.
constexpr double kZeroNormEps = 1e-6;

// x * (1 + scale) + shift with [B, dim] modulation broadcast over tokens.
at::Tensor Modulate(const at::Tensor& x, const at::Tensor& shift,
                    const at::Tensor& scale) {
  return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1);
}

}  // namespace

at::Tensor PlainLayerNorm(const at::Tensor& x, double eps) {
  return at::layer_norm(x, {x.size(-1)}, /*weight=*/{}, /*bias=*/{}, eps);
}

AdaLayerNormZeroImpl::AdaLayerNormZeroImpl(int64_t dim)
    : linear_(register_module("linear", Linear(dim, 6 * dim))) {}

AdaLayerNormZeroOutput AdaLayerNormZeroImpl::Forward(
    const at::Tensor& x, const at::Tensor& embedding) {
  const std::vector<at::Tensor> parts =
      linear_->forward(at::silu(embedding)).chunk(6, /*dim=*/1);
  return {Modulate(PlainLayerNorm(x, kZeroNormEps), parts[0], parts[1]),
          parts[2], parts[3], parts[4], parts[5]};
}

AdaLayerNormZeroSingleImpl::AdaLayerNormZeroSingleImpl(int64_t dim)
    : linear_(register_module("linear", Linear(dim, 3 * dim))) {}

AdaLayerNormZeroSingleOutput AdaLayerNormZeroSingleImpl::Forward(
    const at::Tensor& x, const at::Tensor& embedding) {
  const std::vector<at::Tensor> parts =
      linear_->forward(at::silu(embedding)).chunk(3, /*dim=*/1);
  return {Modulate(PlainLayerNorm(x, kZeroNormEps), parts[0], parts[1]),
          parts[2]};
}

AdaLayerNormContinuousImpl::AdaLayerNormContinuousImpl(int64_t dim,
                                                       int64_t conditioning_dim,
                                                       double eps)
    : eps_(eps),
      linear_(register_module("linear", Linear(conditioning_dim, 2 * dim))) {}

at::Tensor AdaLayerNormContinuousImpl::Forward(const at::Tensor& x,
                                               const at::Tensor& conditioning) {
  const std::vector<at::Tensor> parts =
      linear_->forward(at::silu(conditioning).to(x.scalar_type()))
          .chunk(2, /*dim=*/1);
  return Modulate(PlainLayerNorm(x, eps_), /*shift=*/parts[1],
                  /*scale=*/parts[0]);
}

}  // namespace ditserve::models
