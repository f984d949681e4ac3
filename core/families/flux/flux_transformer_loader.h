#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_LOADER_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_LOADER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/families/flux/flux_transformer_2d_model.h"
#include "core/models/component_weights.h"
#include "core/models/layers/attention.h"

namespace ditserve::models {

// Builds a FluxTransformer2DModel from a diffusers `transformer/` folder
// (config.json + weights) and loads its weights strictly. `blocks` selects a
// PipeFusion stage's range (nullopt = every block); only those blocks are
// built and read from the checkpoint.
absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>>
LoadFluxTransformer2DModel(const std::string& component_dir,
                           std::shared_ptr<Attention> attention,
                           const Placement& placement,
                           std::optional<BlockRange> blocks = std::nullopt);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_LOADER_H_
