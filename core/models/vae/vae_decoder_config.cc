#include "core/models/vae/vae_decoder_config.h"

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::models {
namespace {

absl::Status CheckDecoder(const VaeDecoderConfig& config,
                          const std::string& source,
                          absl::string_view up_block_type) {
  if (config.up_block_types.size() != config.block_out_channels.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": up_block_types has ", config.up_block_types.size(),
        " entries; expected one per block_out_channels entry (",
        config.block_out_channels.size(), ")"));
  }
  for (const std::string& type : config.up_block_types) {
    if (type != up_block_type) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": up block type \"", type,
                       "\" is not supported; expected ", up_block_type));
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

absl::Status ParseVaeDecoderConfig(const nlohmann::json& json,
                                   const std::string& source,
                                   absl::string_view up_block_type,
                                   VaeDecoderConfig& config) {
  const base::JsonFields fields(json, source);
  RETURN_IF_ERROR(fields.PositiveInts({
      {"out_channels", &config.out_channels},
      {"latent_channels", &config.latent_channels},
      {"layers_per_block", &config.layers_per_block},
      {"norm_num_groups", &config.norm_num_groups},
  }));
  ASSIGN_OR_RETURN(config.block_out_channels,
                   fields.PositiveIntList("block_out_channels"));
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
  return CheckDecoder(config, source, up_block_type);
}

}  // namespace ditserve::models
