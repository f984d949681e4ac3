#include "core/models/vae/autoencoder_kl_config.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

constexpr char kUpDecoderBlock[] = "UpDecoderBlock2D";

}  // namespace

absl::StatusOr<AutoencoderKLConfig> ParseAutoencoderKLConfig(
    const nlohmann::json& json, const std::string& source) {
  AutoencoderKLConfig config;
  RETURN_IF_ERROR(ParseVaeDecoderConfig(json, source, kUpDecoderBlock, config));
  const base::JsonFields fields(json, source);
  ASSIGN_OR_RETURN(config.in_channels, fields.PositiveInt("in_channels"));
  ASSIGN_OR_RETURN(config.sample_size, fields.PositiveInt("sample_size"));
  ASSIGN_OR_RETURN(config.down_block_types,
                   fields.StringList("down_block_types"));
  struct BoolField {
    const char* name;
    bool* target;
  };
  // diffusers' defaults for flags older configs omit.
  for (const BoolField& field : {
           BoolField{"use_quant_conv", &config.use_quant_conv},
           BoolField{"use_post_quant_conv", &config.use_post_quant_conv},
           BoolField{"mid_block_add_attention",
                     &config.mid_block_add_attention},
       }) {
    ASSIGN_OR_RETURN(std::optional<bool> value,
                     fields.OptionalBool(field.name));
    *field.target = value.value_or(true);
  }
  return config;
}

absl::StatusOr<AutoencoderKLConfig> ReadAutoencoderKLConfig(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return ParseAutoencoderKLConfig(json, path);
}

nlohmann::json ToJson(const AutoencoderKLConfig& config) {
  nlohmann::json json = {
      {"_class_name", "AutoencoderKL"},
      {"act_fn", "silu"},
      {"in_channels", config.in_channels},
      {"out_channels", config.out_channels},
      {"latent_channels", config.latent_channels},
      {"block_out_channels", config.block_out_channels},
      {"down_block_types", config.down_block_types},
      {"up_block_types", config.up_block_types},
      {"layers_per_block", config.layers_per_block},
      {"norm_num_groups", config.norm_num_groups},
      {"sample_size", config.sample_size},
      {"scaling_factor", config.scaling_factor},
      {"shift_factor", nullptr},
      {"use_quant_conv", config.use_quant_conv},
      {"use_post_quant_conv", config.use_post_quant_conv},
      {"mid_block_add_attention", config.mid_block_add_attention},
      {"force_upcast", true},
      {"latents_mean", nullptr},
      {"latents_std", nullptr},
  };
  if (config.shift_factor.has_value()) {
    json["shift_factor"] = *config.shift_factor;
  }
  return json;
}

}  // namespace ditserve::models
