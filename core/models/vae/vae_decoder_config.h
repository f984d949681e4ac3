#ifndef DITSERVE_CORE_MODELS_VAE_VAE_DECODER_CONFIG_H_
#define DITSERVE_CORE_MODELS_VAE_VAE_DECODER_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"

namespace ditserve::models {

// The fields of a diffusers VAE config.json that every decoder here reads
// (AutoencoderKL, AutoencoderKLCogVideoX).
struct VaeDecoderConfig {
  int64_t out_channels = 3;
  int64_t latent_channels = 0;
  std::vector<int64_t> block_out_channels;
  std::vector<std::string> up_block_types;
  int64_t layers_per_block = 0;
  int64_t norm_num_groups = 0;
  // latents are divided by scaling_factor (after subtracting shift_factor)
  // on the way into the transformer; the pipeline undoes it before decode.
  double scaling_factor = 0.0;
  std::optional<double> shift_factor;

  // Pixels per latent pixel: 2^(number of up blocks - 1).
  int64_t scale_factor() const {
    return int64_t{1} << (block_out_channels.size() - 1);
  }
};

// Reads the decoder fields into `config` and checks them: positive sizes,
// act_fn "silu", every up block `up_block_type`, channels divisible by
// norm_num_groups, a positive scaling_factor. `source` names the file in
// errors.
absl::Status ParseVaeDecoderConfig(const nlohmann::json& json,
                                   const std::string& source,
                                   absl::string_view up_block_type,
                                   VaeDecoderConfig& config);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_VAE_VAE_DECODER_CONFIG_H_
