#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_CONFIG_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/vae/vae_decoder_config.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::families {

// The fields of a diffusers AutoencoderKLCogVideoX config.json that the
// decoder and the pipeline use. norm_eps is not read: every norm of the
// decoder is a spatial norm, which diffusers builds with eps 1e-6 whatever
// the config says.
struct CogVideoXVaeConfig : models::VaeDecoderConfig {
  // Output frames per latent frame (a power of two): the first
  // log2(temporal_compression_ratio) up blocks also up-sample time.
  int64_t temporal_compression_ratio = 0;
  // The resolution the VAE was trained at (diffusers' defaults when absent);
  // its decode tiles are half of it.
  int64_t sample_height = 480;
  int64_t sample_width = 720;

  // How many up blocks double the frame count.
  int64_t temporal_upsampling_blocks() const;
};

// Reads and checks the config: act_fn "silu", every up block
// "CogVideoXUpBlock3D", channels divisible by norm_num_groups, a
// temporal_compression_ratio the up blocks can produce, no post_quant_conv.
// `source` names the file in errors.
absl::StatusOr<CogVideoXVaeConfig> ParseCogVideoXVaeConfig(
    const nlohmann::json& json, const std::string& source);

absl::StatusOr<CogVideoXVaeConfig> ReadCogVideoXVaeConfig(
    const std::string& path);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_VAE_CONFIG_H_
