#include "core/models/vae/autoencoder_kl_config.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

constexpr char kUpDecoderBlock[] = "UpDecoderBlock2D";

absl::Status CheckSupported(const AutoencoderKLConfig& config,
                            const std::string& source) {
  if (config.up_block_types.size() != config.block_out_channels.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": up_block_types has ", config.up_block_types.size(),
        " entries; expected one per block_out_channels entry (",
        config.block_out_channels.size(), ")"));
  }
  for (const std::string& type : config.up_block_types) {
    if (type != kUpDecoderBlock) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": up block type \"", type,
                       "\" is not supported; expected ", kUpDecoderBlock));
    }
  }
  for (int64_t channels : config.block_out_channels) {
    if (channels % config.norm_num_groups != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": block_out_channels entry ", channels,
          " is not divisible by norm_num_groups ", config.norm_num_groups));
    }
  }
  if (config.scaling_factor <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": scaling_factor ",
                                                   config.scaling_factor,
                                                   " must be positive"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AutoencoderKLConfig> ParseAutoencoderKLConfig(
    const nlohmann::json& json, const std::string& source) {
  const base::JsonFields fields(json, source);
  AutoencoderKLConfig config;
  struct IntField {
    const char* name;
    int64_t* target;
  };
  for (const IntField& field : {
           IntField{"in_channels", &config.in_channels},
           IntField{"out_channels", &config.out_channels},
           IntField{"latent_channels", &config.latent_channels},
           IntField{"layers_per_block", &config.layers_per_block},
           IntField{"norm_num_groups", &config.norm_num_groups},
           IntField{"sample_size", &config.sample_size},
       }) {
    ASSIGN_OR_RETURN(int64_t value, fields.PositiveInt(field.name));
    *field.target = value;
  }
  ASSIGN_OR_RETURN(config.block_out_channels,
                   fields.PositiveIntList("block_out_channels"));
  ASSIGN_OR_RETURN(config.down_block_types,
                   fields.StringList("down_block_types"));
  ASSIGN_OR_RETURN(config.up_block_types, fields.StringList("up_block_types"));
  ASSIGN_OR_RETURN(std::string act, fields.String("act_fn"));
  if (act != "silu") {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": act_fn \"", act, "\" is not supported; expected silu"));
  }
  ASSIGN_OR_RETURN(std::optional<double> scaling,
                   fields.OptionalNumber("scaling_factor"));
  if (!scaling.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": field \"scaling_factor\" is missing or null"));
  }
  config.scaling_factor = *scaling;
  ASSIGN_OR_RETURN(config.shift_factor, fields.OptionalNumber("shift_factor"));
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
  RETURN_IF_ERROR(CheckSupported(config, source));
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
