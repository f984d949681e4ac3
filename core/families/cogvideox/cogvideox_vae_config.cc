#include "core/families/cogvideox/cogvideox_vae_config.h"

#include <optional>
#include <utility>

#include "absl/numeric/bits.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::families {
namespace {

constexpr char kUpBlock[] = "CogVideoXUpBlock3D";

absl::Status CheckTemporalCompression(const CogVideoXVaeConfig& config,
                                      const std::string& source) {
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
  return absl::OkStatus();
}

}  // namespace

int64_t CogVideoXVaeConfig::temporal_upsampling_blocks() const {
  return absl::countr_zero(static_cast<uint64_t>(temporal_compression_ratio));
}

absl::StatusOr<CogVideoXVaeConfig> ParseCogVideoXVaeConfig(
    const nlohmann::json& json, const std::string& source) {
  CogVideoXVaeConfig config;
  RETURN_IF_ERROR(ParseVaeDecoderConfig(json, source, kUpBlock, config));
  const base::JsonFields fields(json, source);
  ASSIGN_OR_RETURN(config.temporal_compression_ratio,
                   fields.PositiveInt("temporal_compression_ratio"));
  for (auto [name, target] :
       {std::pair{"sample_height", &config.sample_height},
        std::pair{"sample_width", &config.sample_width}}) {
    ASSIGN_OR_RETURN(std::optional<int64_t> size,
                     fields.OptionalPositiveInt(name));
    *target = size.value_or(*target);
  }
  // diffusers builds post_quant_conv with out_channels (not latent) channels,
  // so no working checkpoint enables it.
  ASSIGN_OR_RETURN(std::optional<bool> post_quant_conv,
                   fields.OptionalBool("use_post_quant_conv"));
  if (post_quant_conv.value_or(false)) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": field \"use_post_quant_conv\" is true; not supported"));
  }
  RETURN_IF_ERROR(CheckTemporalCompression(config, source));
  return config;
}

absl::StatusOr<CogVideoXVaeConfig> ReadCogVideoXVaeConfig(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return ParseCogVideoXVaeConfig(json, path);
}

}  // namespace ditserve::families
