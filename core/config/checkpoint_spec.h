#ifndef DITSERVE_CORE_CONFIG_CHECKPOINT_SPEC_H_
#define DITSERVE_CORE_CONFIG_CHECKPOINT_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/config/model_spec.h"

namespace ditserve::config {

// Reads a diffusers checkpoint folder's model_index.json (pipeline class →
// family; FluxPipeline is flux-dev when the transformer has guidance_embeds),
// transformer/config.json (PixArt: its sample_size too) and vae/config.json
// into the dimensions requests and parallel degrees are checked against.
// Errors name the file and key.
absl::StatusOr<ModelSpec> ReadCheckpointSpec(const std::string& model_dir);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_CHECKPOINT_SPEC_H_
