#ifndef DITSERVE_CORE_MODELS_INITIAL_NOISE_H_
#define DITSERVE_CORE_MODELS_INITIAL_NOISE_H_

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>

namespace ditserve::models {

// The starting noise of one image: float32 standard normal values of `shape`
// drawn on the CPU from a generator seeded with `seed`, the same stream as
// torch.randn(shape, generator=torch.Generator('cpu').manual_seed(seed)).
// Drawing on the CPU makes an image independent of device, batch and rank.
at::Tensor InitialNoise(uint64_t seed, c10::IntArrayRef shape);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_INITIAL_NOISE_H_
