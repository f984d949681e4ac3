#ifndef DITSERVE_CORE_CONFIG_CHECKPOINT_SPEC_H_
#define DITSERVE_CORE_CONFIG_CHECKPOINT_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "nlohmann/json.hpp"

namespace ditserve::config {

// What every family's diffusers checkpoint folder holds, read before the
// family is known: its model_index.json pipeline class,
// transformer/config.json, vae/config.json and the scheduler's class.
struct CheckpointConfigs {
  // model_index.json "_class_name", e.g. "FluxPipeline".
  std::string pipeline_class;
  // scheduler/scheduler_config.json "_class_name" (the scheduler the
  // families run), empty when the file is missing; the whole file (null
  // when missing) and its path.
  std::string scheduler_class;
  nlohmann::json scheduler;
  std::string scheduler_path;
  // transformer/config.json and its path, for the family's own keys.
  nlohmann::json transformer;
  std::string transformer_path;
  // vae/config.json and its path, for the family's VAE.
  nlohmann::json vae;
  std::string vae_path;
  // The dimensions every family has: attention heads, num_layers,
  // patch_size, the VAE's latent channels and scale factor. The family
  // sets `family` and corrects what it counts differently.
  ModelSpec spec;
};

// Errors name the file and key.
absl::StatusOr<CheckpointConfigs> ReadCheckpointConfigs(
    const std::string& model_dir);

// `json`[key] as an int >= 1; INVALID_ARGUMENT naming `path` and the key
// otherwise.
absl::StatusOr<int> PositiveInt(const nlohmann::json& json, const char* key,
                                const std::string& path);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_CHECKPOINT_SPEC_H_
