#include "core/families/cogvideox/cogvideox_vae_config.h"

#include "absl/numeric/bits.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::families {
namespace {

constexpr char kUpBlock[] = "CogVideoXUpBlock3D";

absl::Status CheckSupported(const CogVideoXVaeConfig& config,
                            const std::string& source) {
  if (config.up_block_types.size() != config.block_out_channels.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": up_block_types has ", config.up_block_types.size(),
        " entries; expected one per block_out_channels entry (",
        config.block_out_channels.size(), ")"));
  }
  for (const std::string& type : config.up_block_types) {
    if (type != kUpBlock) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": up block type \"", type,
                       "\" is not supported; expected ", kUpBlock));
    }
  }
  for (int64_t channels : config.block_out_channels) {
    if (channels % config.norm_num_groups != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": block_out_channels entry ", channels,
          " is not divisible by norm_num_groups ", config.norm_num_groups));
    }
  }
  const uint64_t ratio = config.temporal_compression_ratio;
  // The last up block has no up-sampler, so it cannot double the frames.
  const size_t upsamplers = config.block_out_channels.size() - 1;
  if (!absl::has_single_bit(ratio) ||
      static_cast<size_t>(absl::countr_zero(ratio)) > upsamplers) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": temporal_compression_ratio ", ratio,
                     " is not supported; expected a power of two of at most 2^",
                     upsamplers, " (one doubling per up-sampling block)"));
  }
  if (config.scaling_factor <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": scaling_factor ",
                                                   config.scaling_factor,
                                                   " must be positive"));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t CogVideoXVaeConfig::temporal_upsampling_blocks() const {
  return absl::countr_zero(static_cast<uint64_t>(temporal_compression_ratio));
}

absl::StatusOr<CogVideoXVaeConfig> ParseCogVideoXVaeConfig(
    const nlohmann::json& json, const std::string& source) {
  const base::JsonFields fields(json, source);
  CogVideoXVaeConfig config;
  struct IntField {
    const char* name;
    int64_t* target;
  };
  for (const IntField& field : {
           IntField{"out_channels", &config.out_channels},
           IntField{"latent_channels", &config.latent_channels},
           IntField{"layers_per_block", &config.layers_per_block},
           IntField{"norm_num_groups", &config.norm_num_groups},
           IntField{"temporal_compression_ratio",
                    &config.temporal_compression_ratio},
       }) {
    ASSIGN_OR_RETURN(int64_t value, fields.PositiveInt(field.name));
    *field.target = value;
  }
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
  // diffusers builds post_quant_conv with out_channels (not latent) channels,
  // so no working checkpoint enables it.
  ASSIGN_OR_RETURN(std::optional<bool> post_quant_conv,
                   fields.OptionalBool("use_post_quant_conv"));
  if (post_quant_conv.value_or(false)) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": field \"use_post_quant_conv\" is true; not supported"));
  }
  RETURN_IF_ERROR(CheckSupported(config, source));
  return config;
}

absl::StatusOr<CogVideoXVaeConfig> ReadCogVideoXVaeConfig(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return ParseCogVideoXVaeConfig(json, path);
}

}  // namespace ditserve::families
