#include "core/models/initial_noise.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace ditserve::models {

at::Tensor InitialNoise(uint64_t seed, c10::IntArrayRef shape) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace ditserve::models
