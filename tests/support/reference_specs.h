#ifndef DITSERVE_TESTS_SUPPORT_REFERENCE_SPECS_H_
#define DITSERVE_TESTS_SUPPORT_REFERENCE_SPECS_H_

#include "core/config/model_spec.h"

namespace ditserve::testing {

// Dimensions of the released checkpoints of each family (from their
// transformer/config.json), for validation tests that need real sizes.
inline config::ModelSpec FullSizeSpec(config::ModelFamily family) {
  using config::ModelFamily;
  switch (family) {
    case ModelFamily::kFluxDev:
    case ModelFamily::kFluxSchnell:
      // 19 double-stream + 38 single-stream blocks.
      return {.family = family,
              .num_attention_heads = 24,
              .num_layers = 57,
              .patch_size = 2,
              .latent_channels = 16,
              .vae_scale_factor = 8};
    case ModelFamily::kPixArtAlpha:
    case ModelFamily::kPixArtSigma:
      return {.family = family,
              .num_attention_heads = 16,
              .num_layers = 28,
              .patch_size = 2,
              .latent_channels = 4,
              .vae_scale_factor = 8,
              .sample_size = 128};
    case ModelFamily::kSd3Medium:
      return {.family = family,
              .num_attention_heads = 24,
              .num_layers = 24,
              .patch_size = 2,
              .latent_channels = 16,
              .vae_scale_factor = 8};
  }
  return {};
}

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_SUPPORT_REFERENCE_SPECS_H_
