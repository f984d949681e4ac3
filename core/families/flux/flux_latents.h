#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_LATENTS_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_LATENTS_H_

// FLUX's latent layout (FluxPipeline._pack_latents and friends): the VAE
// latent [B, C, h, w] is cut into 2x2 patches, each patch one token of 4C
// channels, tokens in row-major order.

#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace ditserve::families {

struct FluxLatentGrid {
  // VAE latent size (even).
  int64_t height = 0;
  int64_t width = 0;

  int64_t tokens() const { return (height / 2) * (width / 2); }
};

// The latent grid of an image: pixels / vae_scale_factor. INVALID_ARGUMENT
// unless both sides are positive multiples of vae_scale_factor * 2.
absl::StatusOr<FluxLatentGrid> LatentGridFor(int64_t height, int64_t width,
                                             int64_t vae_scale_factor);

// [B, C, h, w] -> [B, (h/2)(w/2), 4C].
at::Tensor PackLatents(const at::Tensor& latents);

// [B, (h/2)(w/2), 4C] -> [B, C, h, w].
at::Tensor UnpackLatents(const at::Tensor& packed, const FluxLatentGrid& grid);

// Position ids of the image tokens, [(h/2)(w/2), 3]: 0, row, column.
at::Tensor LatentImageIds(const FluxLatentGrid& grid,
                          const c10::TensorOptions& options);

// Position ids of the text tokens, [tokens, 3], all zero.
at::Tensor TextIds(int64_t tokens, const c10::TensorOptions& options);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_LATENTS_H_
