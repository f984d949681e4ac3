#ifndef DITSERVE_CORE_CONFIG_MODEL_SPEC_H_
#define DITSERVE_CORE_CONFIG_MODEL_SPEC_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/config/model_defaults.h"

namespace ditserve::config {

// The dimensions of a loaded model that requests and parallel degrees are
// validated against. Read from the checkpoint's config.json files by the
// model loader; tests build it directly.
struct ModelSpec {
  // The served model's defaults row, from its family (defaults.name names
  // the model).
  ModelDefaults defaults;
  // Attention heads of the transformer (Ulysses splits them).
  int num_attention_heads = 0;
  // Transformer blocks of all kinds (PipeFusion splits them into stages).
  int num_layers = 0;
  // Transformer patch size in latent pixels (FLUX's 2×2 packing counts as 2).
  int patch_size = 0;
  // Channels of the VAE latent (16 for FLUX/SD3, 4 for PixArt).
  int latent_channels = 0;
  // Pixels per latent pixel (2^(number of VAE up blocks - 1), 8 in practice).
  int vae_scale_factor = 0;
  // PixArt: the transformer's sample_size (latent side it was trained at),
  // which picks the resolution-binning table; 0 for other families.
  int sample_size = 0;

  // Video: frames per latent frame after the first (the VAE's temporal
  // compression), and latent frames per transformer token (CogVideoX 1.5's
  // patch_size_t); 1 for image models.
  int temporal_compression = 1;
  int temporal_patch = 1;

  // Width of each attention head, and the VAE's block_out_channels (the
  // full-resolution level first): what a request's memory estimate scales
  // with.
  int attention_head_dim = 0;
  std::vector<int> vae_block_out_channels;

  // Decoded pixels of one tile of the VAE's tiled decode
  // (GenerateRequest.vae_tiling), set by the family from its VAE's config;
  // 0 when that config gives no tiles, vae_tiling_refusal saying why.
  int vae_tile_height = 0;
  int vae_tile_width = 0;
  std::string vae_tiling_refusal;

  // The largest height and width the transformer's positions cover
  // (CogVideoX 1.5's RoPE grid is its trained size); 0 when only the
  // server's --max_side_pixels limits them.
  int max_height = 0;
  int max_width = 0;

  // Refuses a num_inference_steps the checkpoint's scheduler cannot take
  // (trailing timestep spacing ends at timestep -1 for 61 steps of 1000),
  // with the scheduler's reason; unset when every count in range works. It
  // is the check every rank's scheduler makes, made at admission so that
  // such a request is refused before it waits in the queue.
  std::function<absl::Status(int num_inference_steps)> check_steps;

  // Height and width must be multiples of this.
  int size_multiple() const { return vae_scale_factor * patch_size; }
  // The transformer's hidden width.
  int64_t hidden_size() const {
    return int64_t{num_attention_heads} * attention_head_dim;
  }
};

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_MODEL_SPEC_H_
