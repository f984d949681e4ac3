#include "core/families/flux/flux_latents.h"

#include <torch/torch.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::families {

absl::StatusOr<FluxLatentGrid> LatentGridFor(int64_t height, int64_t width,
                                             int64_t vae_scale_factor) {
  const int64_t multiple = vae_scale_factor * 2;
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"height", height}, {"width", width}}) {
    if (value <= 0 || value % multiple != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " ", value, " is not a positive multiple of ", multiple,
          " (VAE scale ", vae_scale_factor, " x FLUX 2x2 packing)"));
    }
  }
  return FluxLatentGrid{height / vae_scale_factor, width / vae_scale_factor};
}

at::Tensor PackLatents(const at::Tensor& latents) {
  const int64_t batch = latents.size(0);
  const int64_t channels = latents.size(1);
  const int64_t rows = latents.size(2) / 2;
  const int64_t columns = latents.size(3) / 2;
  return latents.view({batch, channels, rows, 2, columns, 2})
      .permute({0, 2, 4, 1, 3, 5})
      .reshape({batch, rows * columns, channels * 4});
}

at::Tensor UnpackLatents(const at::Tensor& packed, const FluxLatentGrid& grid) {
  const int64_t batch = packed.size(0);
  const int64_t channels = packed.size(2) / 4;
  return packed.view({batch, grid.height / 2, grid.width / 2, channels, 2, 2})
      .permute({0, 3, 1, 4, 2, 5})
      .reshape({batch, channels, grid.height, grid.width});
}

at::Tensor LatentImageIds(const FluxLatentGrid& grid,
                          const c10::TensorOptions& options) {
  const int64_t rows = grid.height / 2;
  const int64_t columns = grid.width / 2;
  at::Tensor ids = at::zeros({rows, columns, 3});
  ids.select(2, 1).add_(at::arange(rows).unsqueeze(1));
  ids.select(2, 2).add_(at::arange(columns).unsqueeze(0));
  return ids.reshape({rows * columns, 3}).to(options);
}

at::Tensor TextIds(int64_t tokens, const c10::TensorOptions& options) {
  return at::zeros({tokens, 3}, options);
}

}  // namespace ditserve::families
