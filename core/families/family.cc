#include "core/families/family.h"

#include <ATen/ATen.h>

#include <string>

namespace ditserve::families {
namespace {

at::Tensor ConcatDefined(const at::Tensor& first, const at::Tensor& second) {
  if (!first.defined()) return first;
  return at::cat({first, second}, /*dim=*/0);
}

}  // namespace

absl::Status NoPromptEncoders() {
  return absl::FailedPreconditionError(
      "the model was loaded without its prompt encoders (from prompt "
      "embeddings only)");
}

void SetVaeTiles(const absl::StatusOr<models::DecodeTiles>& tiles,
                 int64_t scale_factor, config::ModelSpec& spec) {
  if (!tiles.ok()) {
    spec.vae_tiling_refusal = std::string(tiles.status().message());
    return;
  }
  spec.vae_tile_height = static_cast<int>(tiles->latent_height * scale_factor);
  spec.vae_tile_width = static_cast<int>(tiles->latent_width * scale_factor);
}

Conditioning ConcatBatches(const Conditioning& first,
                           const Conditioning& second) {
  return Conditioning{.states = ConcatDefined(first.states, second.states),
                      .pooled = ConcatDefined(first.pooled, second.pooled),
                      .mask = ConcatDefined(first.mask, second.mask)};
}

}  // namespace ditserve::families
