#ifndef DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_CONFIG_H_
#define DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/vae/vae_decoder_config.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::models {

// The fields of a diffusers AutoencoderKL config.json that the decoder and
// the pipelines use.
struct AutoencoderKLConfig : VaeDecoderConfig {
  int64_t in_channels = 3;
  std::vector<std::string> down_block_types;
  int64_t sample_size = 0;
  bool use_quant_conv = true;
  bool use_post_quant_conv = true;
  bool mid_block_add_attention = true;
};

// Reads and checks the config: act_fn "silu", every up block
// "UpDecoderBlock2D", channels divisible by norm_num_groups. `source` names
// the file in errors.
absl::StatusOr<AutoencoderKLConfig> ParseAutoencoderKLConfig(
    const nlohmann::json& json, const std::string& source);

absl::StatusOr<AutoencoderKLConfig> ReadAutoencoderKLConfig(
    const std::string& path);

// The config as config.json holds it (what make_checkpoint writes).
nlohmann::json ToJson(const AutoencoderKLConfig& config);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_CONFIG_H_
