#ifndef DITSERVE_CORE_MODELS_LAYERS_ADA_LAYER_NORM_H_
#define DITSERVE_CORE_MODELS_LAYERS_ADA_LAYER_NORM_H_

// Layer norms whose shift, scale (and gates) are projected from a
// conditioning embedding, as in diffusers.models.normalization. The norms
// themselves have no affine parameters; `linear` holds all the weights.

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "core/models/layers/linear.h"

namespace ditserve::models {

// LayerNorm over the last dim without affine parameters.
at::Tensor PlainLayerNorm(const at::Tensor& x, double eps);

struct AdaLayerNormZeroOutput {
  // norm(x) * (1 + scale_msa) + shift_msa, [B, S, dim].
  at::Tensor normed;
  // [B, dim] each.
  at::Tensor gate_msa;
  at::Tensor shift_mlp;
  at::Tensor scale_mlp;
  at::Tensor gate_mlp;
};

// linear: dim -> 6 dim (shift, scale, gate for attention, then for the MLP).
class AdaLayerNormZeroImpl : public torch::nn::Module {
 public:
  explicit AdaLayerNormZeroImpl(int64_t dim);

  AdaLayerNormZeroOutput Forward(const at::Tensor& x,
                                 const at::Tensor& embedding);

 private:
  Linear linear_;
};
TORCH_MODULE(AdaLayerNormZero);

struct AdaLayerNormZeroSingleOutput {
  at::Tensor normed;
  at::Tensor gate;
};

// linear: dim -> 3 dim (shift, scale, gate).
class AdaLayerNormZeroSingleImpl : public torch::nn::Module {
 public:
  explicit AdaLayerNormZeroSingleImpl(int64_t dim);

  AdaLayerNormZeroSingleOutput Forward(const at::Tensor& x,
                                       const at::Tensor& embedding);

 private:
  Linear linear_;
};
TORCH_MODULE(AdaLayerNormZeroSingle);

// linear: conditioning_dim -> 2 dim (scale first, then shift); FLUX's
// norm_out. Built without affine norm parameters (elementwise_affine=False).
class AdaLayerNormContinuousImpl : public torch::nn::Module {
 public:
  AdaLayerNormContinuousImpl(int64_t dim, int64_t conditioning_dim, double eps);

  at::Tensor Forward(const at::Tensor& x, const at::Tensor& conditioning);

 private:
  double eps_;
  Linear linear_;
};
TORCH_MODULE(AdaLayerNormContinuous);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_ADA_LAYER_NORM_H_
