#ifndef DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_CONFIG_H_
#define DITSERVE_CORE_MODELS_VAE_AUTOENCODER_KL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::models {

// The fields of a diffusers AutoencoderKL config.json that the decoder and
// the pipelines use.
struct AutoencoderKLConfig {
  int64_t in_channels = 3;
  int64_t out_channels = 3;
  int64_t latent_channels = 0;
  std::vector<int64_t> block_out_channels;
  std::vector<std::string> down_block_types;
  std::vector<std::string> up_block_types;
  int64_t layers_per_block = 0;
  int64_t norm_num_groups = 0;
  int64_t sample_size = 0;
  // latents are divided by scaling_factor (after subtracting shift_factor)
  // on the way into the transformer; the pipeline undoes it before decode.
  double scaling_factor = 0.0;
  std::optional<double> shift_factor;
  bool use_quant_conv = true;
  bool use_post_quant_conv = true;
  bool mid_block_add_attention = true;

  // Pixels per latent pixel: 2^(number of up blocks - 1).
  int64_t scale_factor() const {
    return int64_t{1} << (block_out_channels.size() - 1);
  }
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
