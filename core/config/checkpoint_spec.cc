#include "core/config/checkpoint_spec.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::config {
namespace {

absl::StatusOr<int> PositiveInt(const nlohmann::json& json, const char* key,
                                const std::string& path) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_number_integer() || it->get<int64_t>() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": \"", key, "\" must be a positive integer, got ",
                     it == json.end() ? "nothing" : it->dump()));
  }
  return it->get<int>();
}

absl::StatusOr<ModelFamily> FamilyOf(const nlohmann::json& index,
                                     const nlohmann::json& transformer,
                                     const std::string& index_path) {
  const std::string pipeline = index.value("_class_name", "");
  if (pipeline == "FluxPipeline") {
    return transformer.value("guidance_embeds", false)
               ? ModelFamily::kFluxDev
               : ModelFamily::kFluxSchnell;
  }
  if (pipeline == "PixArtAlphaPipeline") return ModelFamily::kPixArtAlpha;
  if (pipeline == "PixArtSigmaPipeline") return ModelFamily::kPixArtSigma;
  if (pipeline == "StableDiffusion3Pipeline") return ModelFamily::kSd3Medium;
  return absl::InvalidArgumentError(absl::StrCat(
      index_path, ": pipeline \"", pipeline,
      "\" is not served; known: FluxPipeline, PixArtAlphaPipeline, "
      "PixArtSigmaPipeline, StableDiffusion3Pipeline"));
}

}  // namespace

absl::StatusOr<ModelSpec> ReadCheckpointSpec(const std::string& model_dir) {
  const std::string index_path = model_dir + "/model_index.json";
  const std::string transformer_path = model_dir + "/transformer/config.json";
  const std::string vae_path = model_dir + "/vae/config.json";
  ASSIGN_OR_RETURN(nlohmann::json index, base::ReadJsonObjectFile(index_path));
  ASSIGN_OR_RETURN(nlohmann::json transformer,
                   base::ReadJsonObjectFile(transformer_path));
  ASSIGN_OR_RETURN(nlohmann::json vae, base::ReadJsonObjectFile(vae_path));

  ModelSpec spec;
  ASSIGN_OR_RETURN(ModelFamily family,
                   FamilyOf(index, transformer, index_path));
  spec.family = family;

  absl::StatusOr<int> heads =
      PositiveInt(transformer, "num_attention_heads", transformer_path);
  absl::StatusOr<int> layers =
      PositiveInt(transformer, "num_layers", transformer_path);
  absl::StatusOr<int> patch =
      PositiveInt(transformer, "patch_size", transformer_path);
  absl::StatusOr<int> latent_channels =
      PositiveInt(vae, "latent_channels", vae_path);
  for (const absl::Status& s : {heads.status(), layers.status(), patch.status(),
                                latent_channels.status()}) {
    if (!s.ok()) return s;
  }
  spec.num_attention_heads = *heads;
  spec.num_layers = *layers;
  spec.patch_size = *patch;
  spec.latent_channels = *latent_channels;

  const bool is_flux = spec.family == ModelFamily::kFluxDev ||
                       spec.family == ModelFamily::kFluxSchnell;
  if (is_flux) {
    // FLUX's transformer sees 2×2-packed latents (patch_size 1 in its
    // config); the pipeline's packing is the effective patch.
    ASSIGN_OR_RETURN(int single, PositiveInt(transformer, "num_single_layers",
                                             transformer_path));
    spec.num_layers += single;
    spec.patch_size *= 2;
  }

  if (spec.family == ModelFamily::kPixArtAlpha ||
      spec.family == ModelFamily::kPixArtSigma) {
    ASSIGN_OR_RETURN(spec.sample_size,
                     PositiveInt(transformer, "sample_size", transformer_path));
  }

  const auto blocks = vae.find("block_out_channels");
  if (blocks == vae.end() || !blocks->is_array() || blocks->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        vae_path, ": \"block_out_channels\" must be a non-empty list"));
  }
  spec.vae_scale_factor = 1 << (static_cast<int>(blocks->size()) - 1);
  return spec;
}

}  // namespace ditserve::config
