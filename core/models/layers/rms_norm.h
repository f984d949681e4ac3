#ifndef DITSERVE_CORE_MODELS_LAYERS_RMS_NORM_H_
#define DITSERVE_CORE_MODELS_LAYERS_RMS_NORM_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace ditserve::models {

// x * rsqrt(mean(x^2 over the last dim) + eps) * weight, computed in
// float32 and multiplied by the weight in the weight's dtype when that is
// bfloat16 or float16, else in x's (diffusers' RMSNorm and transformers'
// T5LayerNorm; LibTorch 1.13 has no such module). From LibTorch 2.4, x and
// a weight of its dtype take the fused rms_norm.
at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps);

// Parameter: `weight` [dim].
class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, double eps);

  at::Tensor Forward(const at::Tensor& x);

 private:
  double eps_;
  at::Tensor weight_;
};
TORCH_MODULE(RMSNorm);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_RMS_NORM_H_
