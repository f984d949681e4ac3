#include "core/families/cogvideox/cogvideox_transformer_config.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::families {
namespace {

// A string field that must hold one value (diffusers builds nothing else for
// these models); absent means the diffusers default, which is that value.
absl::Status RequireString(const nlohmann::json& json,
                           const std::string& source, const char* field,
                           const char* expected) {
  auto it = json.find(field);
  if (it == json.end() || it->is_null() ||
      (it->is_string() && it->get<std::string>() == expected)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", field, " is ",
                                                 it->dump(), "; expected \"",
                                                 expected, "\""));
}

// Fields of the image-to-video models, which this text-to-video
// implementation does not build.
absl::Status RejectImageToVideoFields(const base::JsonFields& fields,
                                      const std::string& source) {
  ASSIGN_OR_RETURN(std::optional<bool> learned,
                   fields.OptionalBool("use_learned_positional_embeddings"));
  if (learned.value_or(false)) {
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": use_learned_positional_embeddings is true (CogVideoX-5b-I2V); "
        "expected false: only the text-to-video models are served"));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> ofs,
                   fields.OptionalPositiveInt("ofs_embed_dim"));
  if (ofs.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": ofs_embed_dim is ", *ofs,
        " (CogVideoX1.5-5B-I2V); expected null: only the text-to-video "
        "models are served"));
  }
  return absl::OkStatus();
}

absl::Status CheckDivisibility(const CogVideoXTransformerConfig& config,
                               const std::string& source) {
  // The RoPE splits a head into t (1/4) and h, w (3/8 each) parts of
  // interleaved pairs; the sincos table splits inner_dim the same way into
  // [sin | cos] halves.
  if (config.use_rotary_positional_embeddings &&
      config.attention_head_dim % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": attention_head_dim ", config.attention_head_dim,
                     " must be a multiple of 16 for the 3-D RoPE"));
  }
  if (!config.use_rotary_positional_embeddings &&
      config.inner_dim() % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": num_attention_heads * attention_head_dim ",
        config.inner_dim(), " must be a multiple of 16 for the sincos table"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CogVideoXTransformerConfig> ParseCogVideoXTransformerConfig(
    const nlohmann::json& json, const std::string& source) {
  const base::JsonFields fields(json, source);
  CogVideoXTransformerConfig config;
  RETURN_IF_ERROR(fields.PositiveInts({
      {"num_attention_heads", &config.num_attention_heads},
      {"attention_head_dim", &config.attention_head_dim},
      {"in_channels", &config.in_channels},
      {"num_layers", &config.num_layers},
      {"time_embed_dim", &config.time_embed_dim},
      {"text_embed_dim", &config.text_embed_dim},
      {"max_text_seq_length", &config.max_text_seq_length},
      {"patch_size", &config.patch_size},
      {"sample_height", &config.sample_height},
      {"sample_width", &config.sample_width},
      {"sample_frames", &config.sample_frames},
      {"temporal_compression_ratio", &config.temporal_compression_ratio},
  }));
  ASSIGN_OR_RETURN(std::optional<int64_t> out_channels,
                   fields.OptionalPositiveInt("out_channels"));
  config.out_channels = out_channels.value_or(config.in_channels);
  ASSIGN_OR_RETURN(config.patch_size_t,
                   fields.OptionalPositiveInt("patch_size_t"));
  struct BoolField {
    const char* name;
    bool* target;
  };
  for (const BoolField& field : {
           BoolField{"patch_bias", &config.patch_bias},
           BoolField{"use_rotary_positional_embeddings",
                     &config.use_rotary_positional_embeddings},
           BoolField{"flip_sin_to_cos", &config.flip_sin_to_cos},
           BoolField{"attention_bias", &config.attention_bias},
       }) {
    ASSIGN_OR_RETURN(std::optional<bool> value,
                     fields.OptionalBool(field.name));
    if (value.has_value()) *field.target = *value;
  }
  struct NumberField {
    const char* name;
    double* target;
  };
  for (const NumberField& field : {
           NumberField{"spatial_interpolation_scale",
                       &config.spatial_interpolation_scale},
           NumberField{"temporal_interpolation_scale",
                       &config.temporal_interpolation_scale},
           NumberField{"freq_shift", &config.freq_shift},
           NumberField{"norm_eps", &config.norm_eps},
       }) {
    ASSIGN_OR_RETURN(std::optional<double> value,
                     fields.OptionalNumber(field.name));
    if (value.has_value()) *field.target = *value;
  }
  ASSIGN_OR_RETURN(std::optional<bool> affine,
                   fields.OptionalBool("norm_elementwise_affine"));
  if (!affine.value_or(true)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source,
                     ": norm_elementwise_affine is false; expected true (every "
                     "released CogVideoX has affine norms)"));
  }
  RETURN_IF_ERROR(
      RequireString(json, source, "activation_fn", "gelu-approximate"));
  RETURN_IF_ERROR(
      RequireString(json, source, "timestep_activation_fn", "silu"));
  RETURN_IF_ERROR(RejectImageToVideoFields(fields, source));
  RETURN_IF_ERROR(CheckDivisibility(config, source));
  return config;
}

absl::StatusOr<CogVideoXTransformerConfig> ReadCogVideoXTransformerConfig(
    const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, base::ReadJsonObjectFile(path));
  return ParseCogVideoXTransformerConfig(json, path);
}

}  // namespace ditserve::families
