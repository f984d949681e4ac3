#ifndef DITSERVE_CORE_MODELS_LAYERS_PARAMETER_INIT_H_
#define DITSERVE_CORE_MODELS_LAYERS_PARAMETER_INIT_H_

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>

namespace ditserve::models {

// The weight-holding layers (Linear, Conv2d, Conv3d, Embedding) leave their
// parameters unwritten: a served model takes every parameter from its
// checkpoint, and drawing them first, as torch::nn's layers do, costs a
// float32 copy of the whole model in host memory and the time to fill it
// (48 GB for FLUX.1-dev) before the load overwrites it.
//
// While a RandomParameters is alive on the thread that builds a model, they
// draw instead, as torch::nn's do: the same distributions, in the same
// order, so a seeded checkpoint writer writes the bytes it always wrote.
// For the writers of random checkpoints and for tests that run a model they
// do not load.
class RandomParameters {
 public:
  RandomParameters();
  ~RandomParameters();
  RandomParameters(const RandomParameters&) = delete;
  RandomParameters& operator=(const RandomParameters&) = delete;

  // Whether a RandomParameters is alive on this thread.
  static bool Active();
};

// A float32 CPU tensor of `shape` with nothing written to it: its pages stay
// untouched (and unallocated) until the load fills it or moves it.
at::Tensor UnwrittenParameter(c10::IntArrayRef shape);

// Within a RandomParameters scope, draws `weight` and `bias` (undefined:
// none) as torch::nn::Linear and ConvNd's reset_parameters do:
// kaiming_uniform(a = sqrt(5)) then U(+-1 / sqrt(fan_in)). Else does nothing.
void DrawWeightAndBias(at::Tensor& weight, at::Tensor& bias);

// Within a RandomParameters scope, draws `weight` from N(0, 1) as
// torch::nn::Embedding does. Else does nothing.
void DrawEmbedding(at::Tensor& weight);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_PARAMETER_INIT_H_
