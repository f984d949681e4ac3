#ifndef DITSERVE_TESTS_SUPPORT_REFERENCE_SPECS_H_
#define DITSERVE_TESTS_SUPPORT_REFERENCE_SPECS_H_

#include "core/config/model_defaults.h"
#include "core/config/model_spec.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/sd3/sd3_defaults.h"

namespace ditserve::testing {

// Dimensions of the released checkpoints of the served model `model` (from
// their transformer/config.json and vae/config.json), for validation and
// memory-estimate tests that need real sizes. The VAE tiles are those of
// FLUX.1's, SD3's and CogVideoX-2b/5b's VAE configs (sample_size 1024;
// sample_height 480, sample_width 720); PixArt's and CogVideoX1.5's are
// left out (0: no tiles).
inline config::ModelSpec FullSizeSpec(const config::ModelDefaults& model) {
  if (model.name == families::kCogVideoX2bDefaults.name) {
    return {.defaults = model,
            .num_attention_heads = 30,
            .num_layers = 30,
            .patch_size = 2,
            .latent_channels = 16,
            .vae_scale_factor = 8,
            .temporal_compression = 4,
            .attention_head_dim = 64,
            .vae_block_out_channels = {128, 256, 256, 512},
            .vae_tile_height = 240,
            .vae_tile_width = 360};
  }
  if (model.name == families::kCogVideoX5bDefaults.name ||
      model.name == families::kCogVideoX15Defaults.name) {
    const bool v15 = model.name == families::kCogVideoX15Defaults.name;
    return {.defaults = model,
            .num_attention_heads = 48,
            .num_layers = 42,
            .patch_size = 2,
            .latent_channels = 16,
            .vae_scale_factor = 8,
            .temporal_compression = 4,
            .temporal_patch = v15 ? 2 : 1,
            .attention_head_dim = 64,
            .vae_block_out_channels = {128, 256, 256, 512},
            .vae_tile_height = v15 ? 0 : 240,
            .vae_tile_width = v15 ? 0 : 360};
  }
  if (model.name == families::kSD3MediumDefaults.name) {
    return {.defaults = model,
            .num_attention_heads = 24,
            .num_layers = 24,
            .patch_size = 2,
            .latent_channels = 16,
            .vae_scale_factor = 8,
            .attention_head_dim = 64,
            .vae_block_out_channels = {128, 256, 512, 512},
            .vae_tile_height = 1024,
            .vae_tile_width = 1024};
  }
  if (model.name == families::kPixArtAlphaDefaults.name ||
      model.name == families::kPixArtSigmaDefaults.name) {
    return {.defaults = model,
            .num_attention_heads = 16,
            .num_layers = 28,
            .patch_size = 2,
            .latent_channels = 4,
            .vae_scale_factor = 8,
            .sample_size = 128,
            .attention_head_dim = 72,
            .vae_block_out_channels = {128, 256, 512, 512}};
  }
  // FLUX.1: 19 double-stream + 38 single-stream blocks.
  return {.defaults = model,
          .num_attention_heads = 24,
          .num_layers = 57,
          .patch_size = 2,
          .latent_channels = 16,
          .vae_scale_factor = 8,
          .attention_head_dim = 128,
          .vae_block_out_channels = {128, 256, 512, 512},
          .vae_tile_height = 1024,
          .vae_tile_width = 1024};
}

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_SUPPORT_REFERENCE_SPECS_H_
