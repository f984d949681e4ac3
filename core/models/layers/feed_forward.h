#ifndef DITSERVE_CORE_MODELS_LAYERS_FEED_FORWARD_H_
#define DITSERVE_CORE_MODELS_LAYERS_FEED_FORWARD_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "core/models/layers/linear.h"

namespace ditserve::models {

// diffusers GELU with a projection: `proj` then tanh-approximated GELU.
class GeluProjectionImpl : public torch::nn::Module {
 public:
  GeluProjectionImpl(int64_t dim_in, int64_t dim_out);

  at::Tensor Forward(const at::Tensor& x);

 private:
  Linear proj_;
};
TORCH_MODULE(GeluProjection);

// diffusers FeedForward(activation_fn="gelu-approximate"): parameters
// net.0.proj (dim -> mult * dim), net.2 (mult * dim -> dim_out); net.1 is the
// dropout of training.
class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(int64_t dim, int64_t dim_out, int64_t mult);

  at::Tensor Forward(const at::Tensor& x);

 private:
  GeluProjection activation_;
  Linear output_;
};
TORCH_MODULE(FeedForward);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_FEED_FORWARD_H_
