#include "core/config/checkpoint_spec.h"

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ditserve::config {

absl::StatusOr<int> PositiveInt(const nlohmann::json& json, const char* key,
                                const std::string& path) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_number_integer() || it->get<int64_t>() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": \"", key, "\" must be a positive integer, got ",
                     it == json.end() ? "nothing" : it->dump()));
  }
  if (it->get<int64_t>() > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": \"", key, "\" must be at most ",
                     std::numeric_limits<int>::max(), ", got ", it->dump()));
  }
  return it->get<int>();
}

namespace {

// The string at `key`, "" when absent; INVALID_ARGUMENT naming the file and
// the key when it is something else.
absl::StatusOr<std::string> OptionalString(const nlohmann::json& json,
                                           const char* key,
                                           const std::string& path) {
  const auto it = json.find(key);
  if (it == json.end()) return std::string();
  if (!it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": \"", key, "\" must be a string, got ", it->dump()));
  }
  return it->get<std::string>();
}

}  // namespace

absl::StatusOr<CheckpointConfigs> ReadCheckpointConfigs(
    const std::string& model_dir) {
  const std::string index_path = model_dir + "/model_index.json";
  CheckpointConfigs configs;
  configs.transformer_path = model_dir + "/transformer/config.json";
  configs.vae_path = model_dir + "/vae/config.json";
  ASSIGN_OR_RETURN(nlohmann::json index, base::ReadJsonObjectFile(index_path));
  ASSIGN_OR_RETURN(configs.transformer,
                   base::ReadJsonObjectFile(configs.transformer_path));
  ASSIGN_OR_RETURN(configs.vae, base::ReadJsonObjectFile(configs.vae_path));
  ASSIGN_OR_RETURN(configs.pipeline_class,
                   OptionalString(index, "_class_name", index_path));
  configs.scheduler_path = model_dir + "/scheduler/scheduler_config.json";
  if (std::filesystem::exists(configs.scheduler_path)) {
    ASSIGN_OR_RETURN(configs.scheduler,
                     base::ReadJsonObjectFile(configs.scheduler_path));
    ASSIGN_OR_RETURN(configs.scheduler_class,
                     OptionalString(configs.scheduler, "_class_name",
                                    configs.scheduler_path));
  }

  const nlohmann::json& transformer = configs.transformer;
  const std::string& transformer_path = configs.transformer_path;
  const nlohmann::json& vae = configs.vae;
  const std::string& vae_path = configs.vae_path;
  absl::StatusOr<int> heads =
      PositiveInt(transformer, "num_attention_heads", transformer_path);
  absl::StatusOr<int> layers =
      PositiveInt(transformer, "num_layers", transformer_path);
  absl::StatusOr<int> patch =
      PositiveInt(transformer, "patch_size", transformer_path);
  absl::StatusOr<int> head_dim =
      PositiveInt(transformer, "attention_head_dim", transformer_path);
  absl::StatusOr<int> latent_channels =
      PositiveInt(vae, "latent_channels", vae_path);
  for (const absl::Status& s : {heads.status(), layers.status(), patch.status(),
                                head_dim.status(), latent_channels.status()}) {
    if (!s.ok()) return s;
  }
  ModelSpec& spec = configs.spec;
  spec.num_attention_heads = *heads;
  spec.num_layers = *layers;
  spec.patch_size = *patch;
  spec.attention_head_dim = *head_dim;
  spec.latent_channels = *latent_channels;

  const auto blocks = vae.find("block_out_channels");
  if (blocks == vae.end() || !blocks->is_array() || blocks->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        vae_path, ": \"block_out_channels\" must be a non-empty list"));
  }
  for (const nlohmann::json& width : *blocks) {
    if (!width.is_number_integer() || width.get<int64_t>() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(vae_path,
                       ": \"block_out_channels\" must hold positive "
                       "integers, got ",
                       blocks->dump()));
    }
    spec.vae_block_out_channels.push_back(width.get<int>());
  }
  spec.vae_scale_factor = 1 << (static_cast<int>(blocks->size()) - 1);
  return configs;
}

}  // namespace ditserve::config
